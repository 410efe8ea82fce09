// Resumable migrations (docs/robustness.md): the checkpoint format, the refusal of checkpoints of
// another run, the merging of several groups' checkpoints, and a migration stopped after some shots
// and resumed, which must give the uninterrupted run's image bit for bit. Also the single-rank
// behaviour of the parallel pieces (shot counter, rank -> GPU rule, shot groups).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "io/checkpoint_file.h"
#include "solvers/contracts/errors.h"
#include "solvers/drivers/acquisition.h"
#include "solvers/drivers/checkpoint_writer.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/shot_parallel.h"

using namespace rtm;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test, removed afterwards.
class TempDir {
public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("rtm_test_checkpoint_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

private:
  fs::path path_;
};

template <typename Function>
std::string input_error_of(Function&& function) {
  try {
    function();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError was thrown";
  return "";
}

MigrationCheckpoint sample_checkpoint(int nx, int ny, int nz, std::vector<long long> finished,
                                      float value) {
  MigrationCheckpoint c;
  c.id = new_checkpoint_id();
  c.group = 0;
  c.identity.shot_file = "shots.h5";
  c.identity.shot_file_bytes = 12345;
  c.identity.shot_count = 8;
  c.identity.shots_fingerprint = 0x0123456789abcdefull;
  c.identity.model_fingerprint = 0xfedcba9876543210ull;
  c.identity.parameters = "reconstruction = boundary\ndirect_wave = mute\n";
  c.finished = std::move(finished);
  c.nx = nx;
  c.ny = ny;
  c.nz = nz;
  for (int k = 0; k < nx * ny * nz; ++k) {
    c.raw_image.push_back(value * float(k) + 0.1f);
    c.illumination.push_back(value + float(k) * 1e-3f);
  }
  return c;
}

// A small migration: 6 shots over a two-layer model, CPU backend.
struct SmallRun {
  VelocityModel truth, migration;
  ShotFile shots;
  MigrationParams params;
};

const SmallRun& small_run() {
  static const SmallRun run = [] {
    SmallRun r;
    const ModelShape shape{20, 12, 18, 10, 10, 10};
    r.truth = layered_model(shape, {110}, {2000, 2600});
    r.migration = constant_model(shape, 2000);
    ModelingParams modeling;
    modeling.backend.backend = "cpu";
    modeling.wavelet.f0 = 20;
    modeling.boundary.width = 6;
    modeling.record_time = 0.2;
    std::ostringstream log;
    r.shots = model_shots(r.truth, default_line_survey(r.truth, 6, 20.0, 1), modeling, log);
    r.params.backend.backend = "cpu";
    r.params.boundary.width = 6;
    return r;
  }();
  return run;
}

MigrationResult migrate_small(const MigrationControl& control, std::ostream& log) {
  const SmallRun& run = small_run();
  return migrate_shots(run.migration, run.shots, run.params, log, nullptr, control);
}

MigrationControl control_for(const std::string& output, const SmallRun& run) {
  MigrationControl control;
  control.checkpoint_output = output;
  control.identity = migration_identity(run.migration, run.shots, "shots.h5", run.params);
  return control;
}

} // namespace

TEST(CheckpointFile, RoundTripKeepsEveryBit) {
  TempDir dir;
  MigrationCheckpoint saved = sample_checkpoint(3, 4, 5, {0, 3, 5}, 0.37f);
  saved.absorbed = {"00000000000000aa", "00000000000000bb"};
  saved.group = 2;
  const std::string path = checkpoint_path(dir / "image.h5", 2);
  write_checkpoint(path, saved);
  const MigrationCheckpoint read = read_checkpoint(path);
  EXPECT_EQ(read.id, saved.id);
  EXPECT_EQ(read.absorbed, saved.absorbed);
  EXPECT_EQ(read.group, 2);
  EXPECT_EQ(read.finished, saved.finished);
  EXPECT_EQ(read.identity.parameters, saved.identity.parameters);
  EXPECT_EQ(read.identity.shots_fingerprint, saved.identity.shots_fingerprint);
  EXPECT_EQ(read.identity.model_fingerprint, saved.identity.model_fingerprint);
  EXPECT_EQ(read.identity.shot_file_bytes, 12345);
  EXPECT_EQ(read.nx, 3);
  EXPECT_EQ(read.ny, 4);
  EXPECT_EQ(read.nz, 5);
  EXPECT_EQ(read.raw_image, saved.raw_image);
  EXPECT_EQ(read.illumination, saved.illumination);
}

// The writer behind a migration's checkpoints (section 11b of docs/rtm.md): each write finished
// before the next starts, the files as write_checkpoint makes them, an error thrown at the next
// start() or finish(), not lost on the writer's thread.
TEST(BackgroundCheckpointWriter, WritesInOrderAndReportsAFailedWrite) {
  TempDir dir;
  const std::string path = checkpoint_path(dir / "image.h5", 0);
  BackgroundCheckpointWriter writer;
  const MigrationCheckpoint first = sample_checkpoint(3, 4, 5, {0}, 0.25f);
  const MigrationCheckpoint second = sample_checkpoint(3, 4, 5, {0, 1}, 0.5f);
  writer.start(path, first);
  writer.start(path, second); // waits for the first
  EXPECT_GE(writer.finish(), 0.0);
  const MigrationCheckpoint read = read_checkpoint(path);
  EXPECT_EQ(read.finished, second.finished);
  EXPECT_EQ(read.raw_image, second.raw_image);
  EXPECT_EQ(writer.finish(), 0.0); // nothing in flight

  writer.start(dir / "no-such-directory/image.h5.checkpoint-0.h5", first);
  EXPECT_ANY_THROW(writer.finish());
  writer.start(dir / "no-such-directory/image.h5.checkpoint-0.h5", first);
  EXPECT_ANY_THROW(writer.start(path, first)); // the failure before, reported here
}

// With a snapshot of the sums (ShotFields::snapshot_image: on the GPU a copy still running), the
// writer's thread takes them, not the caller's, and writes them; a failed take is reported as a
// failed write.
TEST(BackgroundCheckpointWriter, TakesTheSumsOfASnapshotOnItsThread) {
  class RecordingSnapshot final : public ImageSnapshot {
  public:
    RecordingSnapshot(Sums sums, std::thread::id& taker) : sums_(std::move(sums)), taker_(taker) {}
    Sums take() override {
      taker_ = std::this_thread::get_id();
      return std::move(sums_);
    }

  private:
    Sums sums_;
    std::thread::id& taker_;
  };
  class FailingSnapshot final : public ImageSnapshot {
    Sums take() override { throw std::runtime_error("the copy failed"); }
  };
  TempDir dir;
  const std::string path = checkpoint_path(dir / "image.h5", 0);
  const MigrationCheckpoint full = sample_checkpoint(3, 4, 5, {0, 1}, 0.5f);
  MigrationCheckpoint header = full;
  header.raw_image.clear();
  header.illumination.clear();
  std::thread::id taker;
  BackgroundCheckpointWriter writer;
  writer.start(path, header,
               std::make_unique<RecordingSnapshot>(
                   ImageSnapshot::Sums{full.raw_image, full.illumination}, taker));
  writer.finish();
  EXPECT_NE(taker, std::thread::id());
  EXPECT_NE(taker, std::this_thread::get_id()) << "taken on the loop's thread";
  const MigrationCheckpoint read = read_checkpoint(path);
  EXPECT_EQ(read.raw_image, full.raw_image);
  EXPECT_EQ(read.illumination, full.illumination);
  EXPECT_EQ(read.finished, full.finished);

  writer.start(path, header, std::make_unique<FailingSnapshot>());
  EXPECT_THROW(writer.finish(), std::runtime_error);
  EXPECT_EQ(read_checkpoint(path).raw_image, full.raw_image) << "the file before is kept";
}

TEST(CheckpointFile, FindsOnlyCompleteCheckpointsOfTheOutput) {
  TempDir dir;
  const std::string output = dir / "image.h5";
  for (int group : {0, 1, 10}) write_checkpoint(checkpoint_path(output, group), sample_checkpoint(2, 2, 2, {}, 1));
  // An interrupted write's temporary, another output's checkpoint, a look-alike: not ours.
  for (const char* other : {"image.h5.checkpoint-3.h5.tmp-123", "other.h5.checkpoint-0.h5",
                            "image.h5.checkpoint-x.h5", "image.h5.checkpoint-.h5"})
    std::ofstream(dir / other) << "x";
  EXPECT_EQ(find_checkpoints(output),
            (std::vector<std::string>{checkpoint_path(output, 0), checkpoint_path(output, 1),
                                      checkpoint_path(output, 10)}));
}

TEST(CheckpointFile, RefusesFilesThatAreNotCheckpoints) {
  TempDir dir;
  std::ofstream(dir / "junk.h5") << "not hdf5";
  EXPECT_THAT(input_error_of([&] { read_checkpoint(dir / "junk.h5"); }), HasSubstr("junk.h5"));
}

// The model's fingerprint (checkpoint_file.h): the same for a volume taken whole or as runs of
// planes continued one from the other (a group's slabs), whatever the threads; any one changed
// byte, or two planes swapped, changes it. Planes of 4 * 37 bytes: words and a tail.
TEST(ModelFingerprint, PlanesTakenWholeOrInRunsGiveOneValue) {
  constexpr size_t plane = 37, planes = 11;
  std::vector<float> v(plane * planes);
  for (size_t c = 0; c < v.size(); ++c) v[c] = float(c % 13) * 0.25f + float(c / 97);
  const uint64_t whole = fingerprint_planes(v.data(), plane * sizeof(float), planes, kFingerprintSeed);
  uint64_t runs = fingerprint_planes(v.data(), plane * sizeof(float), 4, kFingerprintSeed);
  runs = fingerprint_planes(v.data() + 4 * plane, plane * sizeof(float), planes - 4, runs);
  EXPECT_EQ(runs, whole);
  // FNV-1a over the digests, as the header says.
  const std::vector<uint64_t> digests = plane_digests(v.data(), plane * sizeof(float), planes);
  EXPECT_EQ(fingerprint(digests.data(), digests.size() * sizeof(uint64_t)), whole);
  for (size_t byte : {size_t(0), size_t(5), size_t(4 * plane - 1), size_t(4 * plane * planes - 1)}) {
    std::vector<float> w = v;
    reinterpret_cast<unsigned char*>(w.data())[byte] ^= 0x10;
    EXPECT_NE(fingerprint_planes(w.data(), plane * sizeof(float), planes, kFingerprintSeed), whole)
        << "byte " << byte;
  }
  std::vector<float> swapped = v;
  std::swap_ranges(swapped.begin(), swapped.begin() + plane, swapped.begin() + 2 * plane);
  EXPECT_NE(fingerprint_planes(swapped.data(), plane * sizeof(float), planes, kFingerprintSeed), whole);
}

// A checkpoint of the format before the per-plane fingerprints is refused with what to do.
TEST(CheckpointFile, RefusesACheckpointOfTheEarlierFormatSayingWhy) {
  TempDir dir;
  const std::string path = dir / "old.h5";
  write_checkpoint(path, sample_checkpoint(3, 2, 2, {0}, 1.0f));
  {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    ASSERT_GE(H5Adelete(file, "format"), 0);
    const hid_t type = H5Tcopy(H5T_C_S1);
    const std::string old = "rtm-migration-checkpoint 1";
    H5Tset_size(type, old.size());
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attribute = H5Acreate2(file, "format", type, space, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(H5Awrite(attribute, type, old.c_str()), 0);
    H5Aclose(attribute);
    H5Sclose(space);
    H5Tclose(type);
    H5Fclose(file);
  }
  EXPECT_THAT(input_error_of([&] { read_checkpoint(path); }),
              AllOf(HasSubstr("old.h5"), HasSubstr("earlier rtm"), HasSubstr("delete it")));
}

TEST(CheckpointIdentity, RefusesAnotherRunAndSaysWhatDiffers) {
  const CheckpointIdentity saved = sample_checkpoint(1, 1, 1, {}, 0).identity;
  EXPECT_NO_THROW(check_same_run(saved, saved, "c.h5"));

  CheckpointIdentity other_shots = saved;
  other_shots.shot_file = "other.h5";
  other_shots.shot_count = 9;
  EXPECT_THAT(input_error_of([&] { check_same_run(saved, other_shots, "c.h5"); }),
              AllOf(HasSubstr("c.h5"), HasSubstr("shots.h5"), HasSubstr("other.h5"),
                    HasSubstr("8 shot(s)"), HasSubstr("9 shot(s)")));

  CheckpointIdentity other_model = saved;
  other_model.model_fingerprint ^= 1;
  EXPECT_THAT(input_error_of([&] { check_same_run(saved, other_model, "c.h5"); }),
              HasSubstr("migration velocities"));

  CheckpointIdentity other_parameters = saved;
  other_parameters.parameters = "reconstruction = snapshots\ndirect_wave = mute\n";
  EXPECT_THAT(input_error_of([&] { check_same_run(saved, other_parameters, "c.h5"); }),
              AllOf(HasSubstr("checkpoint reconstruction = boundary"),
                    HasSubstr("now reconstruction = snapshots")));
}

TEST(CheckpointMerge, SumsDisjointGroupsAndDropsAbsorbedFiles) {
  const MigrationCheckpoint a = sample_checkpoint(2, 2, 2, {0, 2}, 1.0f);
  const MigrationCheckpoint b = sample_checkpoint(2, 2, 2, {5}, 2.0f);
  MigrationCheckpoint merged = merge_checkpoints({a, b}, {"a.h5", "b.h5"});
  EXPECT_EQ(merged.finished, (std::vector<long long>{0, 2, 5}));
  for (size_t c = 0; c < merged.raw_image.size(); ++c) {
    EXPECT_EQ(merged.raw_image[c], a.raw_image[c] + b.raw_image[c]);
    EXPECT_EQ(merged.illumination[c], a.illumination[c] + b.illumination[c]);
  }
  EXPECT_THAT(merged.absorbed, ::testing::UnorderedElementsAre(a.id, b.id));

  // A merged file next to the files it absorbed (a resume stopped before deleting them): the
  // absorbed ones do not count twice.
  merged = merge_checkpoints({merged, a, b}, {"m.h5", "a.h5", "b.h5"});
  EXPECT_EQ(merged.finished, (std::vector<long long>{0, 2, 5}));
  EXPECT_EQ(merged.raw_image[3], a.raw_image[3] + b.raw_image[3]);

  // One file alone: its sums exactly.
  EXPECT_EQ(merge_checkpoints({a}, {"a.h5"}).raw_image, a.raw_image);

  const MigrationCheckpoint overlapping = sample_checkpoint(2, 2, 2, {2, 3}, 1.0f);
  EXPECT_THAT(input_error_of([&] { merge_checkpoints({a, overlapping}, {"a.h5", "o.h5"}); }),
              AllOf(HasSubstr("a.h5"), HasSubstr("o.h5"), HasSubstr("shot 2")));
}

TEST(ResumedMigration, StoppedAndResumedEqualsUninterruptedBitwise) {
  TempDir dir;
  const SmallRun& run = small_run();
  std::ostringstream log;
  const MigrationResult whole = migrate_small({}, log);
  ASSERT_EQ(whole.stop_signal, 0);

  for (int every : {1, 2, kAutomaticCheckpoints}) { // the user's intervals and the default
    SCOPED_TRACE("checkpoint every " + std::to_string(every));
    const std::string output = dir / ("image" + std::to_string(every) + ".h5");
    MigrationControl control = control_for(output, run);
    control.checkpoint_every = every;
    int boundaries = 0; // stop at the 4th shot boundary: after 3 shots
    control.stop_requested = [&boundaries] { return ++boundaries > 3 ? 15 : 0; };
    const MigrationResult stopped = migrate_small(control, log);
    EXPECT_EQ(stopped.stop_signal, 15);
    EXPECT_TRUE(stopped.image.empty());
    ASSERT_EQ(find_checkpoints(output).size(), 1u);
    EXPECT_EQ(read_checkpoint(checkpoint_path(output, 0)).finished,
              (std::vector<long long>{0, 1, 2}));

    // Without --resume the checkpoint is not thrown away silently.
    control.stop_requested = nullptr;
    EXPECT_THAT(input_error_of([&] { migrate_small(control, log); }),
                AllOf(HasSubstr(checkpoint_path(output, 0)), HasSubstr("--resume")));

    control.resume = true;
    std::ostringstream resume_log;
    const MigrationResult resumed = migrate_small(control, resume_log);
    EXPECT_THAT(resume_log.str(), HasSubstr("3 of 6 shot(s) already migrated"));
    EXPECT_EQ(resumed.shots_migrated, 3);
    EXPECT_EQ(resumed.raw_image, whole.raw_image);
    EXPECT_EQ(resumed.illumination, whole.illumination);
    EXPECT_EQ(resumed.image, whole.image);
  }
}

TEST(ResumedMigration, RefusesCheckpointsOfOtherParameters) {
  TempDir dir;
  const SmallRun& run = small_run();
  const std::string output = dir / "image.h5";
  MigrationControl control = control_for(output, run);
  control.stop_requested = [] { return 2; }; // stops before the first shot: nothing saved
  std::ostringstream log;
  EXPECT_EQ(migrate_small(control, log).stop_signal, 2);
  EXPECT_TRUE(find_checkpoints(output).empty());

  int boundaries = 0;
  control.stop_requested = [&boundaries] { return ++boundaries > 1 ? 2 : 0; };
  EXPECT_EQ(migrate_small(control, log).stop_signal, 2);
  ASSERT_EQ(find_checkpoints(output).size(), 1u);

  MigrationParams other = run.params;
  other.reconstruction = Reconstruction::snapshots;
  control.identity = migration_identity(run.migration, run.shots, "shots.h5", other);
  control.resume = true;
  control.stop_requested = nullptr;
  EXPECT_THAT(input_error_of([&] { migrate_small(control, log); }),
              AllOf(HasSubstr("now reconstruction = snapshots"), HasSubstr("delete")));

  ShotFile fewer = run.shots;
  fewer.shots.pop_back();
  control.identity = migration_identity(run.migration, fewer, "fewer.h5", run.params);
  EXPECT_THAT(input_error_of([&] { migrate_small(control, log); }),
              AllOf(HasSubstr("fewer.h5"), HasSubstr("6 shot(s)"), HasSubstr("5 shot(s)")));
}

// The anisotropy a TTI checkpoint was written with is part of its identity (a line of its own,
// solvers/drivers/slab_model.h: anisotropy_identity): a TTI checkpoint resumes neither a TTI run
// with other anisotropy (one cell of /epsilon changed) nor an isotropic run of the same /vp, and
// an isotropic checkpoint does not resume a TTI run; each refusal names the line. Migration and
// modeling (whose checkpoint is a directory of shot files with the identity in run.txt).
namespace {

VelocityModel with_anisotropy(VelocityModel m) {
  const size_t n = size_t(m.cells());
  m.anisotropy.epsilon.assign(n, 0.15f);
  m.anisotropy.delta.assign(n, 0.05f);
  m.anisotropy.theta.assign(n, 25.0f);
  m.anisotropy.phi.assign(n, 10.0f);
  return m;
}

VelocityModel with_other_epsilon(VelocityModel m) {
  m.anisotropy.epsilon[m.anisotropy.epsilon.size() / 2] = 0.14f; // not the largest: the same time step
  return m;
}

// Stops at the second shot boundary: after one shot.
std::function<int()> stop_after_one_shot() {
  auto boundaries = std::make_shared<int>(0);
  return [boundaries] { return ++*boundaries > 1 ? 2 : 0; };
}

} // namespace

TEST(ResumedMigration, RefusesCheckpointsOfOtherAnisotropy) {
  TempDir dir;
  const SmallRun& run = small_run();
  MigrationParams params = run.params;
  params.boundary.absorber = Absorber::sponge; // TTI's absorber (the isotropic runs too, to differ
                                               // in the anisotropy alone)
  const VelocityModel tti = with_anisotropy(run.migration), other = with_other_epsilon(tti);
  std::ostringstream log;
  auto stopped_after_one_shot = [&](const VelocityModel& model, const std::string& output) {
    MigrationControl control;
    control.checkpoint_output = output;
    control.identity = migration_identity(model, run.shots, "shots.h5", params);
    control.stop_requested = stop_after_one_shot();
    EXPECT_EQ(migrate_shots(model, run.shots, params, log, nullptr, control).stop_signal, 2);
    EXPECT_EQ(find_checkpoints(output).size(), 1u);
  };
  auto resume_error = [&](const VelocityModel& model, const std::string& output) {
    MigrationControl control;
    control.checkpoint_output = output;
    control.identity = migration_identity(model, run.shots, "shots.h5", params);
    control.resume = true;
    return input_error_of([&] { migrate_shots(model, run.shots, params, log, nullptr, control); });
  };
  const std::string tti_output = dir / "tti.h5", iso_output = dir / "iso.h5";
  stopped_after_one_shot(tti, tti_output);
  EXPECT_THAT(resume_error(other, tti_output),
              AllOf(HasSubstr("checkpoint anisotropy = tti (epsilon, delta, theta, phi), fingerprint"),
                    HasSubstr("now anisotropy = tti (epsilon, delta, theta, phi), fingerprint"),
                    HasSubstr("delete")));
  EXPECT_THAT(resume_error(run.migration, tti_output),
              AllOf(HasSubstr("checkpoint anisotropy = tti"), HasSubstr("now (none)")));
  stopped_after_one_shot(run.migration, iso_output);
  EXPECT_THAT(resume_error(tti, iso_output),
              AllOf(HasSubstr("checkpoint (none), now anisotropy = tti"), HasSubstr("delete")));
  // The same anisotropy is the same run: the identity does not change from call to call.
  EXPECT_EQ(migration_identity(tti, run.shots, "shots.h5", params).parameters,
            migration_identity(with_anisotropy(run.migration), run.shots, "shots.h5", params).parameters);
}

TEST(ResumedModeling, RefusesCheckpointsOfOtherAnisotropy) {
  TempDir dir;
  const SmallRun& run = small_run();
  ModelingParams params;
  params.backend.backend = "cpu";
  params.wavelet.f0 = 20;
  params.boundary.width = 6;
  params.boundary.absorber = Absorber::sponge;
  params.record_time = 0.1;
  const VelocityModel tti = with_anisotropy(run.truth), other = with_other_epsilon(tti);
  const Acquisition acq = default_line_survey(run.truth, 3, 20.0, 2);
  std::ostringstream log;
  auto stopped_after_one_shot = [&](const VelocityModel& model, const std::string& output) {
    ModelingControl control;
    control.checkpoint_output = output;
    control.stop_requested = stop_after_one_shot();
    model_shots(model, acq, params, log, nullptr, nullptr, &control);
    EXPECT_EQ(control.stop_signal, 2);
  };
  auto resume_error = [&](const VelocityModel& model, const std::string& output) {
    ModelingControl control;
    control.checkpoint_output = output;
    control.resume = true;
    return input_error_of([&] { model_shots(model, acq, params, log, nullptr, nullptr, &control); });
  };
  const std::string tti_output = dir / "tti_shots.h5", iso_output = dir / "iso_shots.h5";
  stopped_after_one_shot(tti, tti_output);
  EXPECT_THAT(resume_error(other, tti_output),
              AllOf(HasSubstr("checkpoint anisotropy = tti (epsilon, delta, theta, phi), fingerprint"),
                    HasSubstr("now anisotropy = tti (epsilon, delta, theta, phi), fingerprint")));
  EXPECT_THAT(resume_error(run.truth, tti_output),
              AllOf(HasSubstr("checkpoint anisotropy = tti"), HasSubstr("now (none)")));
  stopped_after_one_shot(run.truth, iso_output);
  EXPECT_THAT(resume_error(tti, iso_output), HasSubstr("checkpoint (none), now anisotropy = tti"));
}

TEST(ShotParallel, OneRankIsOneGroupAndTakesEveryShotInOrder) {
  const ParallelContext one(1);
  EXPECT_FALSE(one.uses_mpi());
  EXPECT_EQ(one.size(), 1);
  EXPECT_TRUE(one.is_root());
  EXPECT_TRUE(one.is_leader());
  EXPECT_EQ(one.group_count(), 1);
  EXPECT_EQ(one.group_comm(), MPI_COMM_NULL);
  EXPECT_EQ(one.who(), "");
  ShotDispenser dispenser(one, 3);
  EXPECT_EQ(dispenser.next(false), 0);
  EXPECT_EQ(dispenser.next(false), 1);
  EXPECT_EQ(dispenser.next(true), -1); // stopped: nothing more, ever
  EXPECT_EQ(dispenser.next(false), -1);
}

TEST(ShotParallel, RanksPerShotMustDivideTheRanks) {
  EXPECT_THAT(input_error_of([] { ParallelContext two(2); }),
              AllOf(HasSubstr("--ranks-per-shot 2"), HasSubstr("1 MPI rank(s)")));
  EXPECT_THAT(input_error_of([] { ParallelContext none(0); }), HasSubstr("at least 1"));
}

TEST(ShotParallel, EachRankOfANodeGetsItsOwnGpu) {
  EXPECT_EQ(gpu_for_local_rank(0, 4, 4, false), 0);
  EXPECT_EQ(gpu_for_local_rank(3, 4, 4, false), 3);
  EXPECT_EQ(gpu_for_local_rank(1, 2, 8, false), 1);
  EXPECT_THAT(input_error_of([] { gpu_for_local_rank(0, 6, 4, false); }),
              AllOf(HasSubstr("6 MPI ranks"), HasSubstr("4 visible GPU(s)"),
                    HasSubstr("--allow-gpu-sharing")));
  EXPECT_EQ(gpu_for_local_rank(5, 6, 4, true), 1);
  EXPECT_THAT(input_error_of([] { gpu_for_local_rank(0, 1, 0, true); }), HasSubstr("no CUDA device"));
}

// One model over several ranks, each reading and holding only its slab (solvers/drivers/slab_model.h,
// solvers/drivers/slab_image.h; docs/decomposition.md, "What each rank reads and holds"). Run under
// the MPI launcher with 2 and 3 ranks (tests/CMakeLists.txt). Every rank runs the migration twice
// on a model whose arrays dominate its memory: split over the ranks (`rtm migrate --ranks-per-shot
// R`'s path: hyperslab reads, per-slab snapshots, the image finished and written slab by slab), and
// alone on the whole model (the one-rank path). Checked: the split run's image file equals the
// one-rank run's bit for bit, and each rank's peak host memory during the split run is at most 60%
// of its peak during the one-rank run.
#include <malloc.h>
#include <mpi.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "io/velocity_model.h"
#include "io/volume_file.h"
#include "io/xdmf_sidecar.h"
#include "kernels/mpi/mpi_context.h"
#include "solvers/drivers/migration.h"
#include "solvers/drivers/modeling.h"
#include "solvers/drivers/model_builder.h"
#include "solvers/drivers/slab_image.h"
#include "solvers/drivers/slab_model.h"
#include "solvers/drivers/smoothing.h"
#include "solvers/drivers/wavelet.h"
#include "tests/support/mpi_test_main.h"
#include "tests/support/random_shots.h"
#include "tests/support/sanitized_build.h"
#include "tests/support/shared_temp_path.h"

namespace rtm::test {
namespace {

// kB of a /proc/self/status field (VmRSS: now; VmHWM: the peak since start or the last reset).
long status_kb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(status, line))
    if (line.compare(0, n, field) == 0 && line[n] == ':') return std::stol(line.substr(n + 1));
  return -1;
}

// The peak host memory of `run` above what the process held before it, in kB. Writing 5 to
// /proc/self/clear_refs resets VmHWM to VmRSS (Linux 4.0+); where that is refused, the peak since
// the start counts, which can only make the one measured later larger (the test runs the split
// run first, so a refusal cannot make it pass).
template <typename Run>
long peak_kb_of(Run&& run) {
  {
    std::ofstream reset("/proc/self/clear_refs");
    reset << "5";
  }
  const long before = status_kb("VmRSS");
  run();
  return status_kb("VmHWM") - before;
}

// AddressSanitizer keeps freed memory in quarantine and maps shadow memory: peaks there say
// nothing about the program's, so a sanitized build checks the image on a smaller model only.
constexpr bool kSanitized = kUnderAsan;

// Model cells per axis: 112^3 (5.6 MB per float array; the one-rank run peaks near 160 MB, 30 such
// arrays of the compute grid), so the arrays dominate what the process holds otherwise.
constexpr int kN = kSanitized ? 48 : 112;
constexpr int kWidth = 8;  // absorbing layers
constexpr double kH = 10;  // spacing (m)
constexpr double kSmooth = 40;

ShotFile make_shots() {
  ShotFile shots = ricker_shot_file(14, 1e-3, 20);
  for (int r = 0; r < 16; ++r)
    shots.receivers.push_back({20.0, 0.5 * (kN - 1) * kH, (2 + r * (kN - 4) / 15) * kH});
  ShotGather g;
  g.id = 0;
  g.source = {30.0, 0.5 * (kN - 1) * kH, 0.5 * (kN - 1) * kH};
  std::mt19937 random(7);
  g.data = random_traces(shots, random);
  shots.shots.push_back(g);
  return shots;
}

MigrationParams params() {
  MigrationParams p;
  p.reconstruction = Reconstruction::snapshots; // snapshots stay per slab
  p.boundary.width = kWidth;
  p.backend.backend = "cpu";
  // The traces are 14 steps long, all before the direct arrival has passed: the mute would zero
  // them, and the images compared below with them.
  p.direct_wave = DirectWaveRemoval::none;
  return p;
}

// `rtm migrate --ranks-per-shot R`'s path over every rank, writing `output`.
void migrate_split(const ParallelContext& parallel, const std::string& model_path, const ShotFile& shots,
                   const std::string& output) {
  const MigrationParams p = params();
  std::ostringstream log;
  const SlabModel part = read_slab_model(model_path, "vp", VelocityCheck::plausible, kSmooth,
                                         p.boundary, parallel.group_comm());
  MigrationControl control;
  control.parallel = &parallel;
  MigrationResult result = migrate_shots(part, shots, p, log, nullptr, control);
  SlabImage mine;
  mine.z_first = result.image_z_first;
  mine.image = std::move(result.image);
  mine.illumination = std::move(result.illumination);
  mine.raw_image = std::move(result.raw_image);
  write_slab_image(output, part.shape, mine, parse_image_datasets("all"), {}, parallel);
}

// `rtm migrate` with one rank on the whole model.
void migrate_whole(const std::string& model_path, const ShotFile& shots, const std::string& output) {
  std::ostringstream log;
  const VelocityModel model = smooth_model(read_velocity_model(model_path), kSmooth);
  const MigrationResult result = migrate_shots(model, shots, params(), log);
  write_volumes(output, model,
                {{"image", &result.image, kImageUnits},
                 {"illumination", &result.illumination, kIlluminationUnits},
                 {"image_raw", &result.raw_image, kRawImageUnits}});
}

// The files of a test: one stem for every rank (shared_temp_stem), and the two models, written by
// rank 0: the measured one (kN^3, three layers) and a thin one (40 planes) to warm both paths up.
struct Models {
  std::string stem, model, small;
};

Models write_models(const ParallelContext& parallel, const std::string& name) {
  Models m;
  m.stem = shared_temp_stem(name);
  m.model = m.stem + "_model.h5";
  m.small = m.stem + "_small.h5";
  const ModelShape shape{kN, kN, kN, kH, kH, kH}, small{kN, kN, 40, kH, kH, kH};
  if (parallel.is_root()) {
    write_velocity_model(m.model, layered_model(shape, {0.3 * kN * kH, 0.6 * kN * kH}, {1500, 2200, 3000}));
    write_velocity_model(m.small, layered_model(small, {200}, {1500, 2200}));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return m;
}

TEST(SlabMemory, EachRankHoldsItsShareAndTheImageIsUnchanged) {
  const ParallelContext parallel(world_size()); // one group: the model over every rank
  const Models models = write_models(parallel, "rtm_slab_memory");
  const std::string &stem = models.stem, &model_path = models.model, &small_path = models.small;
  const ShotFile shots = make_shots();
  const std::string split_path = stem + "_split.h5";
  const std::string whole_path = stem + "_whole_rank" + std::to_string(parallel.rank()) + ".h5";
  // Both paths once on a thin model first: the code, the libraries' pages and MPI's buffers they
  // touch the first time are then not counted against whichever run is measured first.
  migrate_split(parallel, small_path, shots, split_path);
  migrate_whole(small_path, shots, whole_path);

  const long split_kb = peak_kb_of([&] { migrate_split(parallel, model_path, shots, split_path); });
  const long whole_kb = peak_kb_of([&] { migrate_whole(model_path, shots, whole_path); });

  std::printf("rank %d of %d: peak host memory of the split run %.1f MB, of the one-rank run %.1f "
              "MB: %.0f%%\n",
              parallel.rank(), parallel.size(), split_kb / 1024.0, whole_kb / 1024.0,
              100.0 * double(split_kb) / double(whole_kb));
  if (!kSanitized) {
    EXPECT_GT(whole_kb, 10 * kN * kN * kN * 4 / 1024) << "the arrays should dominate the one-rank run";
    EXPECT_LE(double(split_kb), 0.6 * double(whole_kb)) << "rank " << parallel.rank();
  }

  MPI_Barrier(MPI_COMM_WORLD);
  if (parallel.is_root()) {
    for (const char* name : {"image", "illumination", "image_raw"}) {
      VelocityModel a, b;
      const std::vector<float> split = read_volume(split_path, name, a);
      const std::vector<float> whole = read_volume(whole_path, name, b);
      ASSERT_EQ(split.size(), whole.size()) << name;
      float largest = 0;
      for (float v : whole) largest = std::max(largest, std::fabs(v));
      EXPECT_GT(largest, 0.0f) << name << " is all zero: the comparison would prove nothing";
      EXPECT_EQ(std::memcmp(split.data(), whole.data(), split.size() * sizeof(float)), 0)
          << name << " differs from the one-rank run's";
      EXPECT_TRUE(a.nx == b.nx && a.ny == b.ny && a.nz == b.nz && a.oz == b.oz && a.dz == b.dz) << name;
    }
    std::remove(model_path.c_str());
    std::remove(small_path.c_str());
    std::remove(split_path.c_str());
    std::remove(xdmf_path_for(split_path).c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  std::remove(whole_path.c_str());
  std::remove(xdmf_path_for(whole_path).c_str());
}

// `rtm model --ranks-per-shot R`'s path over every rank; the shots on world rank 0.
ShotFile model_split(const ParallelContext& parallel, const std::string& model_path,
                     const Acquisition& acq, const ModelingParams& p) {
  std::ostringstream log;
  const SlabModel part = read_slab_model(model_path, "vp", VelocityCheck::plausible, 0.0, p.boundary,
                                         parallel.group_comm());
  return model_shots(part, acq, p, log, nullptr, parallel);
}

// `rtm model` with one rank on the whole model.
ShotFile model_whole(const std::string& model_path, const Acquisition& acq, const ModelingParams& p) {
  std::ostringstream log;
  return model_shots(read_velocity_model(model_path), acq, p, log);
}

// Modeling reads and holds its slab too: each rank's peak host memory at most 60% of a one-rank
// run's, the traces bit for bit the one-rank run's.
TEST(SlabMemory, ModelingHoldsItsShareAndTheTracesAreUnchanged) {
  const ParallelContext parallel(world_size());
  const Models models = write_models(parallel, "rtm_slab_memory_model");
  const std::string &model_path = models.model, &small_path = models.small;
  ModelingParams p;
  p.boundary.width = kWidth;
  p.backend.backend = "cpu";
  p.dt = 1e-3;
  p.record_time = 0.013; // 14 steps
  p.wavelet.f0 = 20;
  Acquisition acq;
  acq.sources.push_back({30.0, 0.5 * (kN - 1) * kH, 0.5 * (kN - 1) * kH});
  for (int r = 0; r < 16; ++r)
    acq.receivers.push_back({20.0, 0.5 * (kN - 1) * kH, (2 + r * (kN - 4) / 15) * kH});
  // Both paths once on a thin model first (code, library pages, MPI buffers), as above.
  model_split(parallel, small_path, acq, p);
  model_whole(small_path, acq, p);

  ShotFile split, whole;
  const long split_kb = peak_kb_of([&] { split = model_split(parallel, model_path, acq, p); });
  const long whole_kb = peak_kb_of([&] { whole = model_whole(model_path, acq, p); });
  std::printf("rank %d of %d: modeling: peak host memory of the split run %.1f MB, of the one-rank "
              "run %.1f MB: %.0f%%\n",
              parallel.rank(), parallel.size(), split_kb / 1024.0, whole_kb / 1024.0,
              100.0 * double(split_kb) / double(whole_kb));
  if (!kSanitized) {
    EXPECT_GT(whole_kb, 4 * kN * kN * kN * 4 / 1024) << "the arrays should dominate the one-rank run";
    EXPECT_LE(double(split_kb), 0.6 * double(whole_kb)) << "rank " << parallel.rank();
  }
  if (parallel.is_root()) {
    ASSERT_EQ(split.shots.size(), whole.shots.size());
    for (size_t s = 0; s < split.shots.size(); ++s)
      EXPECT_TRUE(split.shots[s].data == whole.shots[s].data) << "shot " << s << " differs";
    EXPECT_EQ(split.nt, whole.nt);
    std::remove(model_path.c_str());
    std::remove(small_path.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

} // namespace
} // namespace rtm::test

int main(int argc, char** argv) {
  // Every array of a run in memory of its own, returned on free: glibc's sliding mmap threshold
  // would otherwise keep freed arrays in the heap and blur the peak of the next run.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_TRIM_THRESHOLD, 256 * 1024);
  return rtm::test::run_mpi_tests(argc, argv);
}

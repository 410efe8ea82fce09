// The physics table (solvers/contracts/physics.h) and what `--physics` reads from it: the names
// and help of the option, and the refusals of what a physics does not support, through the real
// executable (exit 2, the reason named, no output left behind).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "solvers/contracts/physics.h"

namespace rtm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(PhysicsTable, RowsAreCompleteAndNamedOnce) {
  std::set<std::string> names;
  for (const PhysicsInfo& p : physics_table()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_EQ(&physics_named(p.name), &p);
    EXPECT_GE(p.components, 1) << p.name;
    EXPECT_GE(p.slab_halo_planes, kHalo) << p.name << ": a slab needs at least the stencil's radius";
    // A refusal says why.
    EXPECT_EQ(std::string(p.why_no_cpml).empty(), p.supports_cpml) << p.name;
    EXPECT_EQ(std::string(p.why_no_snapshots).empty(), p.supports_snapshots) << p.name;
    EXPECT_EQ(std::string(p.why_no_offset_gathers).empty(), p.supports_offset_gathers) << p.name;
    // The ring boundary saving restores reaches as far as one step does.
    EXPECT_GE(p.ring_width, kHalo) << p.name;
  }
  EXPECT_EQ(physics_named("iso").id, Physics::acoustic);
  EXPECT_EQ(physics_named("tti").components, 2);
  EXPECT_EQ(physics_named("tti").slab_halo_planes, 2 * kHalo); // its two passes
  EXPECT_EQ(physics_named("tti").ring_width, kTtiRing);
  EXPECT_TRUE(physics_named("tti").shear_taper);
  EXPECT_FALSE(physics_named("iso").shear_taper);
  EXPECT_THROW(physics_named("elastic"), std::invalid_argument);
}

// The ring boundary saving keeps, from the row: the acoustic step's kHalo ring, TTI's kTtiRing ring
// of both fields; a box too thin for a hollow ring is kept whole.
TEST(PhysicsTable, SavedRingCellsFollowTheRow) {
  for (const Box& b : {Box{0, 40, 0, 30, 0, 20}, Box{3, 13, 2, 40, 5, 50}, Box{0, 12, 0, 12, 0, 12}}) {
    EXPECT_EQ(saved_ring_cells(Physics::acoustic, b), boundary_ring_cells(b));
    EXPECT_EQ(saved_ring_cells(Physics::tti, b), 2 * tti_ring_cells(b));
  }
  EXPECT_EQ(saved_ring_cells(Physics::tti, Box{0, 12, 0, 12, 0, 12}), 2 * 12 * 12 * 12);
}

// A model's physics is decided by what was read of it: its anisotropy datasets make it TTI.
TEST(PhysicsTable, PhysicsOfAModelIsTtiWhereItsAnisotropyWasRead) {
  VelocityModel m;
  m.nx = m.ny = m.nz = 2;
  m.vp.assign(8, 2000.0f);
  EXPECT_EQ(physics_of(m), Physics::acoustic);
  m.anisotropy.epsilon.assign(8, 0.1f);
  m.anisotropy.delta.assign(8, 0.05f);
  m.anisotropy.theta.assign(8, 0.0f);
  m.anisotropy.phi.assign(8, 0.0f);
  EXPECT_EQ(physics_of(m), Physics::tti);
  EXPECT_EQ(physics_info(physics_of(m)).model_datasets.size(), 4u);
}

class PhysicsOption : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("rtm_physics_option_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // rtm `args` (no word needs quoting) in the test's directory: the exit status; stderr in `err`.
  int run(const std::string& args, std::string& err) const {
    const std::string command = "cd '" + dir_.string() + "' && '" RTM_EXECUTABLE "' " + args +
                                " >stdout.txt 2>stderr.txt";
    const int raw = std::system(command.c_str());
    std::ifstream in(dir_ / "stderr.txt");
    std::stringstream text;
    text << in.rdbuf();
    err = text.str();
    return (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
  }
  fs::path dir_;
};

TEST_F(PhysicsOption, WhatTtiDoesNotSupportIsRefusedWithTheRowsReason) {
  std::string err;
  ASSERT_EQ(run("generate-model --type tilted --shape 24,20,16 --spacing 10 -o tilted.h5", err), 0) << err;
  EXPECT_EQ(run("model -m tilted.h5 --physics tti --absorber cpml --backend cpu --shots 1 "
                "--record-time 0.05 -o shots.h5", err), 2) << err;
  EXPECT_THAT(err, HasSubstr("--absorber cpml is not available with --physics tti: " +
                             std::string(physics_named("tti").why_no_cpml)));
  EXPECT_FALSE(fs::exists(dir_ / "shots.h5"));
  EXPECT_EQ(run("model -m tilted.h5 --physics elastic -o shots.h5", err), 2) << err;
  EXPECT_THAT(err, HasSubstr("--physics"));
  EXPECT_THAT(err, HasSubstr("iso"));
}

// --shear-taper and --shear-taper-radius (solvers/drivers/shear_taper.h): a TTI run tapers with the
// radius given and says so; a radius with the taper off, or one that is no distance, is refused
// naming the option (modeling and migration alike); an isotropic run says it ignores them.
TEST_F(PhysicsOption, ShearTaperOptionsAreCheckedAndTtiOnly) {
  std::string err;
  ASSERT_EQ(run("generate-model --type tilted --shape 24,20,16 --spacing 10 -o tilted.h5", err), 0) << err;
  const std::string model = "model -m tilted.h5 --backend cpu --shots 1 --record-time 0.4 --boundary-width 6 ";
  ASSERT_EQ(run(model + "--physics tti --shear-taper-radius 30 -o shots.h5", err), 0) << err;
  EXPECT_THAT(err, HasSubstr("delta blended towards epsilon within 30 m (elliptic within 15 m)"));
  EXPECT_EQ(run(model + "--physics tti --shear-taper off --shear-taper-radius 50 -o off.h5", err), 2) << err;
  EXPECT_THAT(err, HasSubstr("--shear-taper-radius 50 with --shear-taper off"));
  EXPECT_FALSE(fs::exists(dir_ / "off.h5"));
  EXPECT_EQ(run("migrate -s shots.h5 -m tilted.h5 --backend cpu --physics tti --shear-taper off "
                "--shear-taper-radius 50 -o image.h5", err), 2) << err;
  EXPECT_THAT(err, HasSubstr("--shear-taper-radius 50 with --shear-taper off"));
  EXPECT_FALSE(fs::exists(dir_ / "image.h5"));
  EXPECT_EQ(run(model + "--physics tti --shear-taper-radius -5 -o bad.h5", err), 2) << err;
  EXPECT_THAT(err, HasSubstr("--shear-taper-radius"));
  EXPECT_EQ(run(model + "--physics tti --shear-taper maybe -o bad.h5", err), 2) << err;
  EXPECT_THAT(err, HasSubstr("--shear-taper"));
  EXPECT_FALSE(fs::exists(dir_ / "bad.h5"));
  ASSERT_EQ(run(model + "--physics iso --shear-taper off -o iso.h5", err), 0) << err;
  EXPECT_THAT(err, HasSubstr("--shear-taper and --shear-taper-radius apply to --physics tti only; ignored"));
}

TEST_F(PhysicsOption, HelpListsEveryRow) {
  const std::string command = "'" RTM_EXECUTABLE "' model --help";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  ASSERT_TRUE(pipe);
  std::string out;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0) out.append(buffer, n);
  for (const PhysicsInfo& p : physics_table())
    EXPECT_THAT(out, HasSubstr(std::string(p.name) + " (")) << p.name;
}

} // namespace
} // namespace rtm

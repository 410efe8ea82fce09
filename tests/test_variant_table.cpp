// The CUDA variant table (kernels/cuda/cuda_backend.h, kernels/cuda/steps/variant_table.cu) on the CPU:
// no GPU needed, only a CUDA build. The rules every row and preset must keep, the one name lookup,
// and `rtm bench --list`; they iterate the table, so a new row is checked without an edit here.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "solvers/contracts/errors.h"

namespace rtm {
namespace {

using cuda::VariantRole;

// The message of the std::invalid_argument find_variant throws ("" when it does not throw).
std::string refusal(const std::string& name, const std::vector<std::string>& other_names = {"auto"}) {
  try {
    cuda::find_variant(name, other_names);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(VariantTable, NamesAreUniqueAndPlain) {
  ASSERT_FALSE(cuda::variant_table().empty());
  std::set<std::string> names;
  for (const std::string& name : cuda::variant_names()) {
    EXPECT_TRUE(names.insert(name).second) << name << " appears twice (kernels and presets share one namespace)";
    EXPECT_FALSE(name.empty());
    // '+' adds memory options to a name and ',' separates names on the command line.
    EXPECT_EQ(name.find_first_of("+, "), std::string::npos) << name;
    for (const char* reserved : {"auto", "cpu", "all"})
      EXPECT_NE(name, reserved) << "'" << reserved << "' is a selection, not a variant";
  }
  EXPECT_EQ(names.size(), cuda::variant_table().size() + cuda::variant_presets().size());
}

TEST(VariantTable, RowsAreCompleteAndCountTheirStorage) {
  for (const cuda::VariantInfo& v : cuda::variant_table()) {
    EXPECT_FALSE(v.description.empty()) << v.name;
    // Storage type and its bytes agree; the step touches 4 arrays per cell (p[n], p[n-1],
    // v2dt2 read, p[n+1] written), 3 wavefields and v2dt2, which a kernel may read in another
    // type ("+half_v2dt2"); 41 flops from the stencil (variant_table.cu).
    const std::map<std::string, std::pair<int, int>> field_and_model_bytes = {
        {"float32", {4, 4}}, {"half", {2, 2}}, {"float32+half_v2dt2", {4, 2}}, {"bfp16", {2, 4}},
        {"bfp16+u16_v2dt2", {2, 2}}};
    ASSERT_EQ(field_and_model_bytes.count(v.storage), 1u) << v.name << ": storage '" << v.storage << "'";
    EXPECT_EQ(v.element_bytes, field_and_model_bytes.at(v.storage).first) << v.name;
    EXPECT_EQ(v.model_bytes, field_and_model_bytes.at(v.storage).second) << v.name;
    // bfp16: each wavefield value also carries 1/16 of its block's exponent byte.
    const double exponent_bytes = v.storage.rfind("bfp16", 0) == 0 ? 1.0 / 16 : 0.0;
    const double model_exponent_bytes = v.storage == "bfp16+u16_v2dt2" ? 1.0 / 16 : 0.0;
    EXPECT_DOUBLE_EQ(v.bytes_per_cell, 3.0 * (v.element_bytes + exponent_bytes) + v.model_bytes +
                                           model_exponent_bytes) << v.name;
    EXPECT_DOUBLE_EQ(v.flops_per_cell, 41.0) << v.name;
    EXPECT_STRNE(cuda::variant_role_name(v.role), "?") << v.name;
  }
}

TEST(VariantTable, RolesArePresentOnceWhereRequired) {
  std::map<VariantRole, int> count;
  for (const cuda::VariantInfo& v : cuda::variant_table()) ++count[v.role];
  EXPECT_EQ(count[VariantRole::baseline], 1) << "one speed-up baseline and error reference";
  EXPECT_EQ(count[VariantRole::best_fp32], 1) << "one kernel for the presets";
  EXPECT_LE(count[VariantRole::half_storage], 1);
  for (const VariantRole role : {VariantRole::baseline, VariantRole::best_fp32}) {
    const cuda::VariantInfo* v = cuda::variant_with_role(role);
    ASSERT_NE(v, nullptr) << cuda::variant_role_name(role);
    EXPECT_EQ(v->role, role);
    EXPECT_EQ(v->storage, "float32") << v->name << " (" << cuda::variant_role_name(role) << ")";
  }
  if (const cuda::VariantInfo* half = cuda::variant_with_role(VariantRole::half_storage)) {
    EXPECT_EQ(half->storage, "half") << half->name;
  }
}

TEST(VariantTable, PresetsResolveToTheirKernelAndOptions) {
  // The seeds' names stay selectable.
  std::set<std::string> presets;
  for (const cuda::VariantPreset& p : cuda::variant_presets()) presets.insert(p.name);
  EXPECT_EQ(presets.count("compressible"), 1u);
  EXPECT_EQ(presets.count("l2_persist"), 1u);
  for (const cuda::VariantPreset& p : cuda::variant_presets()) {
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_FALSE(cuda::memory_options_name(p.memory).empty()) << p.name << " turns on no option";
    const cuda::VariantInfo* kernel = cuda::variant_with_role(p.kernel_role);
    ASSERT_NE(kernel, nullptr) << p.name << " runs the " << cuda::variant_role_name(p.kernel_role)
                               << " kernel, and the table has none";
    const cuda::VariantSelection chosen = cuda::find_variant(p.name);
    EXPECT_EQ(chosen.kernel, kernel) << p.name;
    EXPECT_EQ(chosen.memory.compressible, p.memory.compressible) << p.name;
    EXPECT_EQ(chosen.memory.l2_persist, p.memory.l2_persist) << p.name;
  }
  EXPECT_TRUE(cuda::find_variant("compressible").memory.compressible);
  EXPECT_FALSE(cuda::find_variant("compressible").memory.l2_persist);
  EXPECT_TRUE(cuda::find_variant("l2_persist").memory.l2_persist);
  EXPECT_FALSE(cuda::find_variant("l2_persist").memory.compressible);
}

TEST(VariantTable, AutoTimesEveryFloat32KernelTheGpuRuns) {
  // 80 is the oldest capability the build makes code for (CMakeLists.txt), 90 Hopper's.
  for (const int cc : {80, 86, 89, 90, 100}) {
    std::vector<const cuda::VariantInfo*> expected;
    for (const cuda::VariantInfo& v : cuda::variant_table())
      if (v.storage == "float32" && v.min_compute_capability <= cc) expected.push_back(&v);
    EXPECT_EQ(cuda::auto_candidates(cc), expected) << cc;
    // The baseline and at least one faster float32 kernel on every GPU the build covers.
    EXPECT_GE(expected.size(), 2u) << cc;
    EXPECT_NE(std::find(expected.begin(), expected.end(),
                        cuda::variant_with_role(VariantRole::baseline)),
              expected.end())
        << cc;
  }
  // The bulk-copy kernels are Hopper's alone.
  for (const char* name : {"tma_ring", "half_v2dt2"})
    EXPECT_EQ(cuda::find_variant(name).kernel->min_compute_capability, 90) << name;
  for (const cuda::VariantInfo& v : cuda::variant_table())
    EXPECT_TRUE(v.min_compute_capability == 80 || v.min_compute_capability == 90)
        << v.name << ": " << v.min_compute_capability << " (the build makes code for 8.0 and 9.0)";
}

TEST(VariantTable, AKernelTheGpuIsTooOldForIsRefusedByName) {
  cuda::DeviceInfo a100;
  a100.available = true;
  a100.name = "NVIDIA A100-SXM4-80GB";
  a100.cc_major = 8;
  a100.cc_minor = 0;
  const cuda::VariantInfo& tma = *cuda::find_variant("tma_ring").kernel;
  const std::string why = cuda::why_not_on(tma, a100);
  EXPECT_NE(why.find("tma_ring needs compute capability 9.0"), std::string::npos) << why;
  EXPECT_NE(why.find("NVIDIA A100-SXM4-80GB) is 8.0"), std::string::npos) << why;
  EXPECT_NE(why.find("regqueue_vec4"), std::string::npos) << why; // what runs there instead
  EXPECT_EQ(why.find("half_v2dt2"), std::string::npos) << why;    // and not what does not
  try {
    cuda::check_runs_on(tma, a100, "tma_ring+l2_persist");
    ADD_FAILURE() << "tma_ring accepted on compute capability 8.0";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--variant tma_ring+l2_persist: tma_ring needs", 0), 0u)
        << e.what();
  }
  EXPECT_EQ(cuda::why_not_on(*cuda::find_variant("regqueue_vec4").kernel, a100), "");
  cuda::DeviceInfo h200 = a100;
  h200.cc_major = 9;
  EXPECT_EQ(cuda::why_not_on(tma, h200), "");
  EXPECT_NO_THROW(cuda::check_runs_on(tma, h200, "tma_ring"));
}

TEST(VariantTable, AFakeComputeCapabilityOnlyLowersTheRealOne) {
  EXPECT_EQ(cuda::parse_fake_compute_capability("8.0", 90), 80);
  EXPECT_EQ(cuda::parse_fake_compute_capability("8.6", 90), 86);
  EXPECT_EQ(cuda::parse_fake_compute_capability("9.0", 90), 90);
  for (const char* bad : {"", "8", "80", "8.", "x.0", "8.0.0", " 8.0"})
    EXPECT_THROW(cuda::parse_fake_compute_capability(bad, 90), InputError) << "'" << bad << "'";
  try {
    cuda::parse_fake_compute_capability("10.0", 90);
    ADD_FAILURE() << "10.0 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("RTM_FAKE_COMPUTE_CAPABILITY"), std::string::npos);
  }
  try {
    cuda::parse_fake_compute_capability("9.0", 86);
    ADD_FAILURE() << "a capability above the GPU's accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("above this GPU's 8.6"), std::string::npos) << e.what();
  }
}

TEST(VariantTable, LookupReadsKernelsPresetsAndMemoryOptions) {
  for (const cuda::VariantInfo& v : cuda::variant_table()) {
    const cuda::VariantSelection plain = cuda::find_variant(v.name);
    EXPECT_EQ(plain.kernel, &v);
    EXPECT_FALSE(plain.memory.compressible || plain.memory.l2_persist) << v.name;
    for (const cuda::MemoryOptions options :
         {cuda::MemoryOptions{true, false}, cuda::MemoryOptions{false, true},
          cuda::MemoryOptions{true, true}}) {
      // The form a propagator's name takes reads back as the same kernel and options.
      const std::string name = v.name + "+" + cuda::memory_options_name(options);
      const cuda::VariantSelection chosen = cuda::find_variant(name);
      EXPECT_EQ(chosen.kernel, &v) << name;
      EXPECT_EQ(chosen.memory.compressible, options.compressible) << name;
      EXPECT_EQ(chosen.memory.l2_persist, options.l2_persist) << name;
    }
  }
  const cuda::VariantSelection both = cuda::find_variant("l2_persist+compressible");
  EXPECT_TRUE(both.memory.compressible && both.memory.l2_persist);
  EXPECT_EQ(both.kernel, cuda::variant_with_role(VariantRole::best_fp32));
  EXPECT_EQ(cuda::memory_options_name({}), "");
  EXPECT_EQ(cuda::memory_options_name({true, true}), "compressible+l2_persist");
  const cuda::MemoryOptions merged = cuda::combined({true, false}, {false, true});
  EXPECT_TRUE(merged.compressible && merged.l2_persist);
}

TEST(VariantTable, UnknownNamesAreRefusedWithTheKnownOnesAndAGuess) {
  const std::string best = cuda::variant_with_role(VariantRole::best_fp32)->name;
  const std::string typo = best.substr(0, best.size() - 1); // one letter short
  const std::string message = refusal(typo, {"auto", "cpu"});
  ASSERT_FALSE(message.empty()) << typo << " was accepted";
  EXPECT_NE(message.find("unknown variant '" + typo + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("auto, cpu"), std::string::npos) << message;
  for (const std::string& name : cuda::variant_names())
    EXPECT_NE(message.find(name), std::string::npos) << name << " not listed: " << message;
  EXPECT_NE(message.find("did you mean " + best + "?"), std::string::npos) << message;

  const std::string far = refusal("warp_speed_9");
  EXPECT_NE(far.find("warp_speed_9"), std::string::npos) << far;
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;

  const std::string option = refusal(best + "+compresible");
  EXPECT_NE(option.find("'compresible' is no memory option"), std::string::npos) << option;
  EXPECT_NE(option.find("did you mean " + best + "+compressible?"), std::string::npos) << option;

  // The caller's own names are not variants; neither are empty names or dangling options.
  for (const std::string& bad : std::vector<std::string>{"auto", "all", "", best + "+",
                                                         "+compressible", best + "++l2_persist"})
    EXPECT_FALSE(refusal(bad).empty()) << "'" << bad << "' was accepted";
}

// `rtm bench --list` prints every kernel with its row's figures, then every preset, from the
// table (the executable needs no GPU for it).
TEST(VariantTable, BenchListShowsEveryKernelAndPreset) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(RTM_EXECUTABLE " bench --list --csv", "r"), pclose);
  ASSERT_TRUE(pipe);
  std::string out;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0) out.append(buffer.data(), n);
  std::istringstream lines(out);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line)) << out;
  EXPECT_EQ(line.rfind("variant,kind,kernel,role,storage,bytes/cell,flops/cell,memory,", 0), 0u) << line;
  std::map<std::string, std::string> rows; // name -> its CSV line
  while (std::getline(lines, line)) rows[line.substr(0, line.find(','))] = line;
  for (const cuda::VariantInfo& v : cuda::variant_table()) {
    ASSERT_EQ(rows.count(v.name), 1u) << v.name << " missing from:\n" << out;
    std::ostringstream expected;
    expected << v.name << ",kernel," << v.name << "," << cuda::variant_role_name(v.role) << ","
             << v.storage << "," << v.bytes_per_cell << "," << v.flops_per_cell << ",-,";
    EXPECT_EQ(rows[v.name].rfind(expected.str(), 0), 0u) << rows[v.name];
    // The last column: the lowest compute capability, as NVIDIA writes it.
    const std::string min_cc = std::to_string(v.min_compute_capability / 10) + "." +
                               std::to_string(v.min_compute_capability % 10);
    EXPECT_EQ(rows[v.name].substr(rows[v.name].rfind(',') + 1), min_cc) << rows[v.name];
  }
  for (const cuda::VariantPreset& p : cuda::variant_presets()) {
    ASSERT_EQ(rows.count(p.name), 1u) << p.name << " missing from:\n" << out;
    const std::string kernel = cuda::variant_with_role(p.kernel_role)->name;
    EXPECT_EQ(rows[p.name].rfind(p.name + ",preset," + kernel + ",", 0), 0u) << rows[p.name];
    EXPECT_NE(rows[p.name].find("," + cuda::memory_options_name(p.memory) + ","), std::string::npos)
        << rows[p.name];
  }
  EXPECT_EQ(rows.size(), cuda::variant_names().size()) << out;
}

} // namespace
} // namespace rtm

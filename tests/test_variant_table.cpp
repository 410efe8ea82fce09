// The CUDA variant table (kernels/cuda/cuda_backend.h) on the CPU: no GPU needed, only a CUDA build.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "kernels/cuda/cuda_backend.h"

namespace rtm {
namespace {

const cuda::VariantInfo* find(const std::string& name) {
  for (const cuda::VariantInfo& v : cuda::variant_table())
    if (v.name == name) return &v;
  return nullptr;
}

TEST(VariantTable, HasEveryRequiredNameOnce) {
  for (const char* name : {"naive_32x32", "blockz_128x8", "async_prefetch", "compressible",
                           "l2_persist", "fp16_storage"})
    EXPECT_NE(find(name), nullptr) << name << " is missing";
  std::set<std::string> names;
  for (const cuda::VariantInfo& v : cuda::variant_table())
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " appears twice";
  EXPECT_EQ(names.count("auto"), 0u) << "'auto' is the selection, not a variant";
}

TEST(VariantTable, RowsAreComplete) {
  for (const cuda::VariantInfo& v : cuda::variant_table()) {
    EXPECT_FALSE(v.description.empty()) << v.name;
    EXPECT_GT(v.bytes_per_cell, 0.0) << v.name;
    EXPECT_GT(v.flops_per_cell, 0.0) << v.name;
    EXPECT_NE(find(v.kernel), nullptr) << v.name << " runs kernel '" << v.kernel << "', no such row";
  }
}

TEST(VariantTable, CountsFollowTheStencil) {
  // 4 arrays touched once per cell: 16 bytes in float32, 8 in half; 41 flops (variant_table.cu).
  for (const cuda::VariantInfo& v : cuda::variant_table()) {
    EXPECT_DOUBLE_EQ(v.bytes_per_cell, v.name == "fp16_storage" ? 8.0 : 16.0) << v.name;
    EXPECT_DOUBLE_EQ(v.flops_per_cell, 41.0) << v.name;
  }
}

TEST(VariantTable, MemoryPresetsAreWhereTheNamesSay) {
  ASSERT_NE(find("compressible"), nullptr);
  ASSERT_NE(find("l2_persist"), nullptr);
  EXPECT_TRUE(find("compressible")->preset.compressible);
  EXPECT_FALSE(find("compressible")->preset.l2_persist);
  EXPECT_TRUE(find("l2_persist")->preset.l2_persist);
  EXPECT_FALSE(find("l2_persist")->preset.compressible);
  for (const cuda::VariantInfo& v : cuda::variant_table()) {
    if (v.name != "compressible" && v.name != "l2_persist") {
      EXPECT_FALSE(v.preset.compressible || v.preset.l2_persist) << v.name;
    }
  }
  // The presets reuse one float32 kernel rather than a kernel of their own.
  EXPECT_EQ(find("compressible")->kernel, find("l2_persist")->kernel);
  EXPECT_EQ(find(find("compressible")->kernel)->bytes_per_cell, 16.0);
}

} // namespace
} // namespace rtm

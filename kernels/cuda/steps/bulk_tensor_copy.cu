#include "kernels/cuda/steps/bulk_tensor_copy.cuh"

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/util/driver_api.cuh"

namespace rtm::cuda {

namespace {

// The tensor map of a padded array whose tensor starts at `start` (element (0, 0, 0) of the
// tensor), rows of g.pitch elements of `element_bytes`, boxes of box_x x box_y x 1 elements.
CUtensorMap encode_planes(const void* start, CUtensorMapDataType type, size_t element_bytes,
                          const GridLayout& g, int box_x, int box_y) {
  const cuuint64_t dims[3] = {cuuint64_t(g.pitch), cuuint64_t(g.ny + 2 * kHalo),
                              cuuint64_t(g.nz + 2 * kHalo)};
  const cuuint64_t strides[2] = {cuuint64_t(g.pitch) * element_bytes,
                                 cuuint64_t(g.plane) * element_bytes};
  const cuuint32_t box[3] = {cuuint32_t(box_x), cuuint32_t(box_y), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  CUtensorMap map;
  CU_CHECK(driver_api().tensor_map_encode_tiled(
      &map, type, 3, const_cast<void*>(start), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

} // namespace

CUtensorMap make_plane_tensor_map(const float* array, const GridLayout& g, int box_x, int box_y) {
  // The tensor starts at the halo cell (-kHalo, -kHalo, -kHalo): index() of that cell is
  // g.offset, a multiple of 4 floats, so the start is 16-byte aligned as the copy engine needs.
  // Each row is `pitch` floats wide, so the x halo on the right (x = nx .. nx + kHalo - 1) lies
  // inside the tensor (pitch >= nx + 2 kHalo).
  const float* start = array + g.index(-kHalo, -kHalo, -kHalo);
  return encode_planes(start, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, sizeof(float), g, box_x, box_y);
}

CUtensorMap make_plane_tensor_map(const __half* array, const GridLayout& g, int box_x, int box_y) {
  // index(-kHalo, -kHalo, -kHalo) = g.offset = kRowAlignFloats - kHalo elements: 56 bytes in half,
  // not 16-byte aligned; 4 elements earlier (x = -2 kHalo) it is 48. Rows and planes are
  // multiples of kRowAlignFloats elements, so every row start keeps that alignment.
  static_assert((kRowAlignFloats - 2 * kHalo) * sizeof(__half) % 16 == 0, "aligned tensor start");
  const __half* start = array + g.index(-2 * kHalo, -kHalo, -kHalo);
  return encode_planes(start, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, sizeof(__half), g, box_x, box_y);
}

} // namespace rtm::cuda

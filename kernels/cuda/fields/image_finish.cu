// The image's finish on the device (image_finish.cuh): three passes over the box, each bound by
// memory (a 512^3 box: 0.5 GB read for the row sums, 1.6 GB moved by the normalisation and 1.1 GB
// by the filter), instead of the host's passes over the downloaded sums and the illumination's
// download.
#include "kernels/cuda/fields/image_finish.cuh"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cuda/util/cuda_check.cuh"
#include "kernels/cuda/util/device_buffer.cuh"

namespace rtm::cuda {
namespace {

constexpr int kThreads = 256;

// A thread per row: its sum from the first cell, image_row_sum's order.
__global__ void row_sums_kernel(const float* __restrict__ volume, int nx, int64_t rows,
                                double* __restrict__ sums) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows) sums[r] = image_row_sum(volume + r * nx, nx);
}

__global__ void normalise_kernel(float* __restrict__ image, const float* __restrict__ illumination,
                                 int64_t cells, double eps) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < cells;
       c += int64_t(gridDim.x) * blockDim.x)
    image[c] = normalised_image_value(image[c], illumination[c], eps);
}

// A thread per cell of a row segment; an edge cell's outside neighbour is itself.
__global__ void laplacian_filter_kernel(const float* __restrict__ v, float* __restrict__ out,
                                        int nx, int ny, int nz, double ix, double iy, double iz) {
  const int i = int(blockIdx.x) * blockDim.x + int(threadIdx.x);
  const int j = int(blockIdx.y), k = int(blockIdx.z);
  if (i >= nx) return;
  const int64_t plane = int64_t(nx) * ny;
  const int64_t c = k * plane + int64_t(j) * nx + i;
  auto at = [&](int64_t offset) { return v[c + offset]; };
  out[c] = laplacian_filter_value(at(0), at(i > 0 ? -1 : 0), at(i + 1 < nx ? 1 : 0),
                                  at(j > 0 ? -nx : 0), at(j + 1 < ny ? nx : 0),
                                  at(k > 0 ? -plane : 0), at(k + 1 < nz ? plane : 0), ix, iy, iz);
}

} // namespace

void finish_image_on_device(float* image, float* illumination, int nx, int ny, int nz,
                            const ImageFinish& finish, cudaStream_t stream,
                            bool& filtered_in_illumination) {
  filtered_in_illumination = false;
  const int64_t rows = int64_t(ny) * nz, cells = rows * nx;
  if (cells == 0) return;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));

  DeviceBuffer row_sums(size_t(rows) * sizeof(double), AllocationKind::plain, device,
                        "the illumination's row sums");
  row_sums_kernel<<<unsigned((rows + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      illumination, nx, rows, row_sums.as<double>());
  CUDA_CHECK_LAUNCH("row_sums_kernel");
  std::vector<double> host(static_cast<size_t>(rows));
  CUDA_CHECK(cudaMemcpyAsync(host.data(), row_sums.data(), row_sums.bytes(), cudaMemcpyDeviceToHost,
                             stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  double sum = 0;
  for (double s : host) sum += s; // in order: image_finish.h
  const double eps = finish.eps_fraction * (sum / double(cells));

  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int64_t blocks = std::min<int64_t>((cells + kThreads - 1) / kThreads, int64_t(sms) * 16);
  normalise_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(image, illumination, cells, eps);
  CUDA_CHECK_LAUNCH("normalise_kernel");
  if (!finish.laplacian) return;

  const dim3 grid(unsigned((nx + kThreads - 1) / kThreads), unsigned(ny), unsigned(nz));
  laplacian_filter_kernel<<<grid, kThreads, 0, stream>>>(
      image, illumination, nx, ny, nz, 1 / (finish.dx * finish.dx), 1 / (finish.dy * finish.dy),
      1 / (finish.dz * finish.dz));
  CUDA_CHECK_LAUNCH("laplacian_filter_kernel");
  filtered_in_illumination = true;
}

} // namespace rtm::cuda

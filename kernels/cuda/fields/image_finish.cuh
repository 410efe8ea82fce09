// The migrated image finished where its sums lie (solvers/contracts/shot_fields.h, finish_image):
// normalised by the illumination, then Laplacian-filtered, by solvers/contracts/image_finish.h's
// arithmetic, so the bits are those of the host's finish of the downloaded sums.
#pragma once

#include <cuda_runtime.h>

#include "solvers/contracts/image_finish.h"

namespace rtm::cuda {

// `image` and `illumination`: dense [nz][ny][nx] floats on the current device. The image becomes
// the normalised one; with finish.laplacian the filtered image is written to `illumination`
// (used up) and `filtered_in_illumination` says so. The illumination's mean comes from row sums
// made here and added on the host in order (one synchronisation of `stream`). Checked launches.
void finish_image_on_device(float* image, float* illumination, int nx, int ny, int nz,
                            const ImageFinish& finish, cudaStream_t stream,
                            bool& filtered_in_illumination);

} // namespace rtm::cuda

// A CUDA stream that destroys itself: the benchmarks and the microkernels queue their work on one.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/util/cuda_check.cuh"

namespace rtm::cuda {

class Stream {
public:
  // Non-blocking: it does not synchronise with the legacy default stream.
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { (void)cudaStreamDestroy(stream_); } // a destructor cannot throw
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  operator cudaStream_t() const { return stream_; }
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

private:
  cudaStream_t stream_ = nullptr;
};

} // namespace rtm::cuda

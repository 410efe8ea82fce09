// The CUDA snapshot store (solvers/contracts/wavefield.h, SnapshotStore) of any CUDA wavefield
// whose current field is a padded array of its layout: the acoustic field's p[n], TTI's p
// (kernels/cuda/tti). The store reads and writes that field through SnapshotFieldAccess, so one
// store serves every physics (kernels/cuda/fields/cuda_snapshot_store.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "kernels/cuda/steps/wave_step.cuh"
#include "solvers/contracts/wavefield.h"

namespace rtm::cuda {

// What a snapshot store needs of its wavefield.
struct SnapshotFieldAccess {
  Wavefield* owner = nullptr; // the contract's owner of the store
  int device = 0;
  cudaStream_t stream = nullptr; // the field's stream: saves and restores are queued there
  Storage storage = Storage::fp32;
  std::function<void*()> current; // the current field now (the pointer moves with the steps)
  // Throws std::runtime_error with both numbers and `hint` when `bytes` exceed free memory.
  std::function<void(size_t bytes, const std::string& what, const std::string& hint)>
      require_free_memory;
  // Around each save and restore: the field's timing of box copies (profiling).
  std::function<void()> begin_timed, end_timed;
};

// std::runtime_error with both numbers when the device slots (or, for host slots, the pinned
// memory or the staging) do not fit.
std::unique_ptr<SnapshotStore> make_cuda_snapshot_store(const SnapshotFieldAccess& field,
                                                        const Box& box, int slots,
                                                        RingPrecision precision,
                                                        SnapshotPlace place);

} // namespace rtm::cuda

// SKIP_WITHOUT_GPU() for the GPU tests that reach the CUDA backend through the drivers
// (solvers/drivers/backend.h): they are built in every configuration, and a build without CUDA
// kernels skips them with the reason. The tests that link rtm_cuda itself (CUDA builds only) take
// the macro from cuda_test_support.h instead.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "solvers/drivers/backend.h"

// Ends the current test as skipped (with the reason) where no GPU is usable.
#define SKIP_WITHOUT_GPU()                                                                         \
  do {                                                                                             \
    std::string why;                                                                               \
    if (!::rtm::cuda_usable(&why)) GTEST_SKIP() << "no usable GPU: " << why;                       \
  } while (0)

// SKIP_WITHOUT_GPU() for the GPU tests that reach the CUDA backend through the drivers
// (solvers/drivers/backend.h): built with CUDA (tests/CMakeLists.txt), they skip with the reason
// where no GPU is usable. The tests that link rtm_cuda itself take the macro from
// cuda_test_support.h instead.
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

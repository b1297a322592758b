// The one CUDA error check: names the failing call, file, line, error code and text.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "core/error.hpp"

namespace core {
[[noreturn]] inline void cuda_fail(cudaError_t err, const char* call, const char* file, int line) {
  throw RuntimeError(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                     ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}
}  // namespace core

#define CUDA_CHECK(call)                                                    \
  do {                                                                      \
    cudaError_t err_ = (call);                                              \
    if (err_ != cudaSuccess) ::core::cuda_fail(err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations at once.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

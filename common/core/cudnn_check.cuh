// The one cuDNN error check, beside CUDA_CHECK: names the failing call, file, line, status and
// cuDNN's own account of it. Header-only and apart from cuda_check.cuh, so that only a program
// that includes it needs cudnn.h (and links cuDNN itself).
#pragma once
#include <cudnn.h>

#include <string>

#include "core/error.hpp"

namespace core {
[[noreturn]] inline void cudnn_fail(cudnnStatus_t status, const char* call, const char* file, int line) {
  char detail[512] = "";
  cudnnGetLastErrorString(detail, sizeof detail);
  throw RuntimeError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                     cudnnGetErrorString(status) + (detail[0] ? std::string(" (") + detail + ")" : std::string()));
}
}  // namespace core

#define CUDNN_CHECK(call)                                                              \
  do {                                                                                 \
    const cudnnStatus_t s_ = (call);                                                   \
    if (s_ != CUDNN_STATUS_SUCCESS) ::core::cudnn_fail(s_, #call, __FILE__, __LINE__); \
  } while (0)

// The NCCL error check, as CUDA_CHECK: names the failing call, file, line and NCCL's text.
#pragma once
#include <nccl.h>

#include <string>

#include "core/error.hpp"

namespace core {
[[noreturn]] inline void nccl_fail(ncclResult_t err, const char* call, const char* file, int line) {
  throw RuntimeError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                     ncclGetErrorString(err) + " (" + ncclGetLastError(nullptr) + ")");
}
}  // namespace core

#define NCCL_CHECK(call)                                                      \
  do {                                                                        \
    ncclResult_t err_ = (call);                                               \
    if (err_ != ncclSuccess) ::core::nccl_fail(err_, #call, __FILE__, __LINE__); \
  } while (0)

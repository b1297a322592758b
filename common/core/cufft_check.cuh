// The one cuFFT error check, beside CUDA_CHECK: names the failing call, file, line and result.
// Header-only: a program that uses it links cuFFT itself.
#pragma once
#include <cufft.h>

#include <string>

#include "core/error.hpp"

namespace core {
inline const char* cufft_error_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    default: return "cufftResult";
  }
}
}  // namespace core

#define CUFFT_CHECK(call)                                                                       \
  do {                                                                                          \
    const cufftResult r_ = (call);                                                              \
    if (r_ != CUFFT_SUCCESS)                                                                    \
      throw ::core::RuntimeError(std::string(#call) + " failed at " + __FILE__ + ":" +          \
                                 std::to_string(__LINE__) + ": " + ::core::cufft_error_name(r_) + \
                                 " (" + std::to_string(int(r_)) + ")");                         \
  } while (0)

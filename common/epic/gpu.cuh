// What the EPIC GPU steps share and do not teach: cuFFT error checks, pinned host memory, the
// product list as a kernel argument, and a per-phase timer (CUDA events around each phase of a
// gulp, summed over the run) whose totals go into the record as the step's breakdown.
#pragma once
#include <cuda_runtime.h>
#include <cufft.h>

#include <map>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "error.hpp"
#include "nvtx.hpp"
#include "step.hpp"

namespace epic {

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

#define CUFFT_CHECK(call)                                                                       \
  do {                                                                                          \
    const cufftResult r_ = (call);                                                              \
    if (r_ != CUFFT_SUCCESS)                                                                    \
      throw ::core::RuntimeError(std::string(#call) + " failed at " + __FILE__ + ":" +          \
                                 std::to_string(__LINE__) + ": " + ::epic::cufft_error_name(r_) + \
                                 " (" + std::to_string(int(r_)) + ")");                         \
  } while (0)

// The products as a kernel argument.
struct ProductList {
  int count = 0;
  int kind[5] = {0, 0, 0, 0, 0};  // Product values
  int plane[5] = {0, 0, 0, 0, 0}; // first plane of each product
};
inline ProductList product_list(const Inputs& in) {
  ProductList p;
  p.count = in.product_count;
  int plane = 0;
  for (int k = 0; k < in.product_count; ++k) {
    p.kind[k] = int(in.products[k]);
    p.plane[k] = plane;
    plane += is_complex(in.products[k]) ? 2 : 1;
  }
  return p;
}

// Per-phase times of a stream's work (the default stream unless named): begin(name) ... end();
// totals read after the work has finished. Each phase is also an NVTX range, so Nsight Systems
// shows the same names. A phase on another stream overlaps the others: its total is its own
// time, not a share of the gulp's.
class PhaseTimer {
 public:
  ~PhaseTimer() {
    for (auto& e : events_) cudaEventDestroy(e);
  }
  void reset() {
    pending_.clear();
    totals_.clear();
    used_ = 0;
  }
  void begin(const char* name, cudaStream_t stream = nullptr) {
    nvtxPush(name);
    current_ = name;
    stream_ = stream;
    start_ = event();
    CUDA_CHECK(cudaEventRecord(events_[start_], stream));
  }
  void end() {
    const size_t stop = event();
    CUDA_CHECK(cudaEventRecord(events_[stop], stream_));
    pending_.push_back({current_, start_, stop});
    nvtxPop();
  }
  // Waits for the recorded work and returns milliseconds per phase, summed.
  const std::map<std::string, double>& totals() {
    for (const Pending& p : pending_) {
      CUDA_CHECK(cudaEventSynchronize(events_[p.stop]));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, events_[p.start], events_[p.stop]));
      totals_[p.name] += ms;
    }
    pending_.clear();
    return totals_;
  }

 private:
  struct Pending {
    std::string name;
    size_t start, stop;
  };
  size_t event() {
    if (used_ == events_.size()) {
      cudaEvent_t e;
      CUDA_CHECK(cudaEventCreate(&e));
      events_.push_back(e);
    }
    return used_++;
  }
  static void nvtxPush(const char* name) {
#ifdef STEPWISE_HAVE_NVTX
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  static void nvtxPop() {
#ifdef STEPWISE_HAVE_NVTX
    nvtxRangePop();
#endif
  }
  std::vector<cudaEvent_t> events_;
  size_t used_ = 0;
  std::vector<Pending> pending_;
  std::map<std::string, double> totals_;
  std::string current_;
  cudaStream_t stream_ = nullptr;
  size_t start_ = 0;
};

}  // namespace epic

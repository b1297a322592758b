// NVTX ranges around the harness phases (load, compute, store, reference) so that
// Nsight Systems shows them by name. A no-op where the NVTX header is absent.
#pragma once
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define STEPWISE_HAVE_NVTX 1
#endif

namespace core {

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) {
#ifdef STEPWISE_HAVE_NVTX
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  ~NvtxRange() {
#ifdef STEPWISE_HAVE_NVTX
    nvtxRangePop();
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace core

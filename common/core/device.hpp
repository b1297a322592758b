// The GPU a step runs on. Declared here for every target; defined only in the CUDA
// platform library (platform_cuda.cu), which GPU steps and the probe link.
#pragma once
#include <memory>
#include <string>

#include "core/timing.hpp"

namespace core {

struct DeviceInfo {
  std::string name;  // empty for CPU steps
  std::string sm;    // "9.0"
  int sms = 0;
  int clock_mhz = 0;
  size_t shared_per_block_optin = 0;
};

// Selects `device`; throws NoGpuError (exit 77) when there is no usable GPU.
DeviceInfo require_gpu(int device);
// CUDA events around the default stream's work.
std::unique_ptr<KernelTimer> make_device_timer();

}  // namespace core

// The CUDA side of the harness: device selection and the event timer.
#include <cuda_runtime.h>

#include "core/cuda_check.cuh"
#include "core/device.hpp"

namespace core {

DeviceInfo require_gpu(int device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0)
    throw NoGpuError(std::string("no usable CUDA GPU (") +
                     (err != cudaSuccess ? cudaGetErrorString(err) : "0 devices") + ")");
  if (device < 0 || device >= count)
    throw UsageError("--device " + std::to_string(device) + ": this machine has " +
                     std::to_string(count) + " GPU(s)");
  CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  DeviceInfo d;
  d.name = prop.name;
  d.sm = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  d.sms = prop.multiProcessorCount;
  d.clock_mhz = clock_khz / 1000;
  d.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  CUDA_CHECK(cudaFree(nullptr));  // create the context outside any timed region
  return d;
}

namespace {
class EventTimer final : public KernelTimer {
 public:
  EventTimer() {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() override { CUDA_CHECK(cudaEventRecord(start_)); }
  double stop_ms() override {
    CUDA_CHECK(cudaEventRecord(stop_));
    CUDA_CHECK(cudaEventSynchronize(stop_));
    CUDA_CHECK(cudaGetLastError());  // a failed kernel surfaces here, named
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};
}  // namespace

std::unique_ptr<KernelTimer> make_device_timer() { return std::make_unique<EventTimer>(); }

}  // namespace core

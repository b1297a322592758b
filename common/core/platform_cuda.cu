// The CUDA side of the harness: device selection and the event timers (the harness's
// KernelTimer, a step's PhaseTimer).
#include <cuda_runtime.h>

#include "core/cuda_check.cuh"
#include "core/device.hpp"
#include "core/nvtx.hpp"
#include "core/ranks.hpp"

namespace core {

namespace {

// Why cudaGetDeviceCount found no GPU, in words a newcomer can act on. Without any NVIDIA
// driver the runtime answers cudaErrorInsufficientDriver, whose text ("CUDA driver version is
// insufficient for CUDA runtime version") reads as "upgrade your driver"; the driver's version
// tells the two apart: 0 where none is installed. CUDA's own text stays, in parentheses.
std::string no_gpu_reason(cudaError_t err) {
  if (err == cudaSuccess) return "no NVIDIA GPU found (0 CUDA devices)";
  const std::string cuda = std::string("CUDA: ") + cudaGetErrorString(err);
  int driver = 0;
  if (err == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
    return "the NVIDIA driver (CUDA " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
           ") is older than this program's CUDA runtime (" + std::to_string(CUDART_VERSION / 1000) + "." +
           std::to_string(CUDART_VERSION % 1000 / 10) + "): update the driver (" + cuda + ")";
  if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice)
    return "no NVIDIA driver or GPU found on this machine (" + cuda + ")";
  return std::string("no usable CUDA GPU (") + cuda + ")";
}

}  // namespace

DeviceInfo require_gpu(int device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) throw NoGpuError(no_gpu_reason(err));
  // A rank beyond the host's GPUs (two ranks on a one-GPU machine) cannot run here: skipped,
  // as a GPU step is where there is none.
  if (ranks().local_rank > 0 && device >= count)
    throw NoGpuError("rank " + std::to_string(ranks().rank) + " drives GPU " + std::to_string(device) +
                     ": this machine has " + std::to_string(count));
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

struct PhaseTimer::Events {
  struct Pending {
    std::string name;
    size_t start, stop;
  };
  // The next unused event, created when the pool has none.
  size_t next() {
    if (used == pool.size()) {
      cudaEvent_t e;
      CUDA_CHECK(cudaEventCreate(&e));
      pool.push_back(e);
    }
    return used++;
  }
  std::vector<cudaEvent_t> pool;
  size_t used = 0;
  std::vector<Pending> pending;  // recorded, not yet read
  std::string current;           // the open phase
  cudaStream_t stream = nullptr;
  size_t start = 0;
};

PhaseTimer::PhaseTimer() : events_(std::make_unique<Events>()) {}
PhaseTimer::~PhaseTimer() {
  for (cudaEvent_t e : events_->pool) cudaEventDestroy(e);
}
void PhaseTimer::reset() {
  events_->pending.clear();
  events_->used = 0;
  totals_.clear();
}
void PhaseTimer::begin(const char* name, CUstream_st* stream) {
#ifdef STEPWISE_HAVE_NVTX
  nvtxRangePushA(name);
#endif
  Events& e = *events_;
  e.current = name;
  e.stream = stream;
  e.start = e.next();
  CUDA_CHECK(cudaEventRecord(e.pool[e.start], stream));
}
void PhaseTimer::end() {
  Events& e = *events_;
  const size_t stop = e.next();
  CUDA_CHECK(cudaEventRecord(e.pool[stop], e.stream));
  e.pending.push_back({e.current, e.start, stop});
#ifdef STEPWISE_HAVE_NVTX
  nvtxRangePop();
#endif
}
const std::map<std::string, double>& PhaseTimer::totals() {
  Events& e = *events_;
  for (const Events::Pending& p : e.pending) {
    CUDA_CHECK(cudaEventSynchronize(e.pool[p.stop]));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e.pool[p.start], e.pool[p.stop]));
    totals_[p.name] += ms;
  }
  e.pending.clear();
  return totals_;
}

}  // namespace core

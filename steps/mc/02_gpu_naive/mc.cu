// mc 02_gpu_naive: 00_cpu moved to the GPU as directly as possible. One thread simulates
// one photon with the same physics (tiny_mc's rejection method for the direction); each
// thread draws from its own cuRAND Philox4_32_10 subsequence; every deposit is a global
// atomicAdd into the batch row of the thread's block (block b adds to row b % 4096; a row
// is a batch of photons for the harness's standard errors, common/mc/gpu.cuh). Deposits
// are added as 64-bit fixed point, so the order of the atomics cannot change the result.
// ~76 interactions per photon make ~76 global atomics per photon: the bottleneck that
// 03_gpu_tallies removes.
#include <curand_kernel.h>

#include "mc/gpu.cuh"
#include "mc/step.hpp"

namespace mc {
namespace {

#include <transport.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"02_gpu_naive", "GPU, a photon per thread, cuRAND, global atomics", true,
          {{"threads", 128, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuNaive>(core::tunable(t, "threads"));
}

}  // namespace mc

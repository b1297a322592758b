// mc 07_gpu_tuned: 06_gpu_lean_interaction with the tallies as rows of 64-bit fixed-point
// counters, one row per kThreadsPerRow threads, and photon weights in 32-bit fixed point,
// because on sm_90 only the 32-bit integer shared atomic is native. A float column per thread
// held the kernel to 16 warps per SM; the rows allow 20, and integer sums are exact, so the
// columns' periodic flush is gone (the README measures what that bought).
#include "mc/gpu.cuh"
#include "mc/philox.hpp"
#include "mc/step.hpp"

namespace mc {
namespace {

#include <store_block_tally.cuh>

#include <fly_absorb_scatter.cuh>

#include <transport_round.cuh>

#include <transport.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"07_gpu_tuned", "GPU, flat loop, lean interaction, fixed-point tally rows", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuTuned>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc

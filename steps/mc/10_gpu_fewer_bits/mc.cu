// mc 10_gpu_fewer_bits: 07_gpu_tuned drawing 42 random bits per interaction instead of 64, so
// that one Philox4x32-7 draw feeds three interactions instead of two: the step's uniform from
// 21 bits, cos(theta) from 11 and phi from 10 (README: what each resolution costs the answer,
// about 1e-7, and what the draws cost, 12.5 issue slots of 07's 57.7 per interaction).
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
  return {"10_gpu_fewer_bits", "GPU, 07 with 42 random bits per interaction, three per Philox draw", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuTuned>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc

// mc 06_gpu_lean_interaction: 05_gpu_flat_loop with the interaction cut down from the SASS
// (the README counts each cut). Once no lane waits for another, a photon costs what the
// schedulers issue for it: Philox4x32-7 instead of -10, one SFU instruction per square root,
// positions in units of ln 2 / mu_t (a step is log2(xi), the shell one FMA), the shell's
// address one IMAD, and two instructions per random float.
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
  return {"06_gpu_lean_interaction", "GPU, flat loop, the interaction cut down from the SASS", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuLeanInteraction>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc

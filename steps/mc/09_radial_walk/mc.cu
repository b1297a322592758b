// mc 09_radial_walk: 07_gpu_tuned with the photon reduced to its distance from the source.
// Exact for this problem only (infinite, homogeneous medium, isotropic scattering, point
// source: README), where the radii alone are a Markov chain; layers, boundaries or
// anisotropic scattering need 07's 3D walk. A thread runs its photons in one flat loop,
// kInFlight at a time. Weights are 32-bit fixed point and the tallies rows of 64-bit
// counters, because on sm_90 only the 32-bit integer shared atomic is native.
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
  return {"09_radial_walk", "GPU, 07's kernel walking in r alone (exact for this problem)", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuTuned>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc

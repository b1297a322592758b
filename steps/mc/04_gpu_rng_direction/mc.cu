// mc 04_gpu_rng_direction: 03_gpu_tallies with the randomness made cheap. cuRAND's
// curand_uniform() keeps 64 bytes of state per thread, buffers four outputs behind a branch
// and converts with an integer-to-float instruction that runs at a quarter of the FP32 rate;
// the rejection method for the direction needs ~2.5 uniforms per scattering, and a warp
// loops until its unluckiest lane is accepted. Here:
//  - Philox4x32-10 is called in the kernel (common/mc/philox.hpp): the counter is
//    (draw, photon, tag), the key the seed; no state, no initialisation, no buffering.
//  - One 128-bit draw feeds two interactions: 64 bits each, 23 for the step, 23 for
//    cos(theta), 18 for phi (bits are independent, every bit of Philox is good).
//  - Floats come from the bits by building the mantissa (1.m in [1, 2)), not by conversion.
//    The step uniform is 1.m - 1 + 2^-24, in (0, 1): log never sees 0.
//  - The math around them is cheap too: sqrt as q rsqrt(q), no denormal handling (-ftz=true),
//    a multiply by 1/p instead of a division, the shell index without a float-to-int,
//    positions in shell widths, the direction kept as sines and cosines.
//  - The direction needs no rejection: cos(theta) uniform on (-1, 1), phi uniform, so
//    (sin t cos p, sin t sin p, cos t) is isotropic; sine and cosine from the SFU.
//  - The roulette takes no extra random number: it is decided by the next step's uniform xi
//    (survive if xi <= p), and given survival xi / p is again uniform on (0, 1], so the
//    same number still draws the step. Same distribution as tiny_mc's separate draw.
#include "mc/gpu.cuh"
#include "mc/philox.hpp"
#include "mc/step.hpp"

namespace mc {
namespace {

#include <store_block_tally.cuh>

#include <fly_absorb_scatter.cuh>

#include <transport.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"04_gpu_rng_direction", "GPU, in-kernel Philox, rejection-free direction", true,
          {{"threads", 128, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuRngDirection>(core::tunable(t, "threads"));
}

}  // namespace mc

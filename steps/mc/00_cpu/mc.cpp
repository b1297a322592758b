// mc 00_cpu: the baseline, a faithful single-thread port of Prahl's tiny_mc. Photons fly
// exponential steps, deposit (1 - albedo) of their weight at every interaction, scatter
// isotropically (direction by tiny_mc's rejection method) and meet a roulette once their
// weight is low. What differs from tiny_mc is only what made it wrong or unmeasurable:
// the random numbers come from Philox streams (not rand()), the uniform is in (0, 1] so
// -log never sees 0, the deposit is the weight lost (w - w c, exact in float, where
// (1 - c) w drifts from it by ~1e-7, which 2^30 photons detect), and the tally is kept per
// batch of photons so the harness can give per-photon standard errors (steps/mc/README.md).
#include <algorithm>
#include <cmath>

#include "mc/philox.hpp"
#include "mc/step.hpp"

namespace mc {
namespace {

#include <host.hpp>

}  // namespace

StepInfo step_info() { return {"00_cpu", "CPU, one thread: tiny_mc as published", false, {}}; }

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<Cpu>(); }

}  // namespace mc

// mc 01_cpu_omp: 00_cpu on every core. Each batch of photons has its own Philox stream and
// its own tally row, so batches are independent: OpenMP hands whole batches to threads
// (dynamic schedule: photon lengths vary), every thread accumulates into the row of the
// batch it owns (a per-thread tally, no sharing, no atomics), and the reduction over
// batches is the harness's sum of the rows. The output is the same, bit for bit, as
// 00_cpu's for any number of threads.
#include <algorithm>
#include <cmath>
#include <omp.h>

#include "mc/philox.hpp"
#include "mc/step.hpp"

namespace mc {
namespace {

#include <host.hpp>

}  // namespace

StepInfo step_info() { return {"01_cpu_omp", "CPU, OpenMP over batches of photons", false, {}}; }

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<CpuOmp>(); }

}  // namespace mc

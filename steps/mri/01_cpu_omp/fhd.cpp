// mri 01_cpu_omp: the honest CPU baseline. The loops are interchanged (one voxel gathers
// over all samples, so threads never write the same voxel), OpenMP spreads voxels over the
// cores, and the inner loop is a SIMD reduction whose sin/cos come from glibc's vector math
// library (libmvec, at most 4 ulp).
#include <cmath>
#include <omp.h>
#include <vector>

#include "core/portable.hpp"
#include "mri/step.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

#include <host.hpp>

}  // namespace

StepInfo step_info() {
  return {"01_cpu_omp", "CPU, OpenMP threads + SIMD sin/cos (libmvec)", false, Accuracy::exact, {}};
}

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<CpuOmp>(); }

}  // namespace mri

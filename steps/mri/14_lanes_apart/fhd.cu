// mri 14_lanes_apart: 13's binned spread, with the 32 lanes of a warp given samples far apart
// in the bin. Sorted into a bin, samples keep the order of their arm, and on large an arm
// places about 8 samples in each grid cell it crosses: 32 consecutive samples add into the
// same few cells, at the same time. A float atomic in shared memory is a compare-and-swap
// loop, so lanes that hit one address take turns. Here lane l of a warp takes the samples
// l * ceil(n/32), l * ceil(n/32) + 1, ... of its subproblem of n (a transpose of 13's order):
// at any moment the warp's lanes are ceil(n/32) samples apart, mostly in different cells.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/timing.hpp"
#include "mri/device_problem.cuh"
#include "mri/oversampled_grid.cuh"
#include "mri/es_kernel.hpp"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

#include <spread.cuh>

#include <spread_subproblems.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"14_lanes_apart", "Gridding: 13's bins, a warp's lanes on samples far apart", true,
          Accuracy::tolerance,
          {{"threads", 256, 32, 1024, "Threads per block"},
           {"subproblem", 1024, 32, 65536, "Most samples one block spreads (a bin with more is cut into several)"},
           {"tolerance", 1e-4, 1e-6, 1e-2, "Relative L2 error allowed against the direct sum (sets the kernel width)",
            false}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GriddingStep>(int(core::tunable(t, "threads")), core::real_tunable(t, "tolerance"),
                                        int(core::tunable(t, "subproblem")));
}

}  // namespace mri

// mri 15_fixed_width: 14's spread with the kernel width a template parameter, one instance per
// width --tolerance can choose (4 .. 8). 14's loops run to a width known only at run time, so
// the compiler keeps them as loops and the weights array they index in local memory, and every
// weight read competes with the shared-memory atomics for the same load/store pipeline. With W
// known, the y and x loops unroll, the weights stay in registers, and what is left per cell is
// the multiply and the two atomics. The z loop stays a loop (its weight computed in it), to
// keep each instance's code small.
#include <algorithm>
#include <cmath>
#include <string>
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
  return {"15_fixed_width", "Gridding: 14's spread compiled for each kernel width", true,
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

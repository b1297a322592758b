// mri 17_aggregated_plan: 16 with a faster plan. 16's plan takes each sample's rank in its bin
// with one integer atomicAdd on the bin's counter: 3.2 M atomics on large, and the samples of
// a warp, neighbours on one spiral arm, mostly fall in the same bin, so the same counter takes
// up to 32 adds at once and the L2 serializes them. Here the lanes of a warp that share a bin
// find each other (__match_any_sync), the lowest of them adds the group's size to the counter
// once, and each lane's rank is that base plus the number of its group's lanes below it. The
// ranks, the places and everything compute() does are 16's.
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
  return {"17_aggregated_plan", "Gridding: 16 with the plan's bin counts added once per warp and bin", true,
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

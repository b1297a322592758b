// mri 16_fixed_point: 15's spread with the subgrid in 32-bit fixed point. Hopper has no float
// add for shared memory: 15's atomicAdd compiles to a load, an add and a compare-and-swap that
// loops until no other lane wrote between them (LDS, FADD, ATOMS.CAST.SPIN), and the profile
// of 15 shows that pipeline 94 % busy. An integer add to shared memory is one instruction
// (ATOMS.ADD). So each block first sums its samples' largest weights, S = sum_m max(|Re mu_m|,
// |Im mu_m|), which bounds every cell of its subgrid (a kernel weight is at most 1), and adds
// each contribution as the integer nearest to it times 2^30 / S: no cell can overflow, and the
// rounding, S 2^-31 per add, is far under a float sum's over the same cells. The block then
// adds each cell, scaled back to float, to the grid as before. Integer sums do not depend on
// the order of the adds: the subgrids are now the same from run to run.
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
  return {"16_fixed_point", "Gridding: 15's subgrid summed in 32-bit fixed point", true,
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

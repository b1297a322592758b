// mri 13_binned_spread: 12's gridding with the spread cuFINUFFT uses. A plan, made in load()
// from the sample positions alone (outside the timed compute(), as cuFINUFFT's plan is outside
// its execute; the step reports its time as plan_ms), sorts the samples into bins of 8^3 grid cells (a
// counting sort: count, prefix sum, place) and cuts each bin's list into subproblems of at
// most --subproblem samples. compute() gives each subproblem one block: its samples add into
// the bin's (8 + W)^3 cells in shared memory, and the block adds that subgrid to the grid
// once. 12 made 2 W^3 global float atomics per sample (803 M on large at W 5); here those
// adds hit shared memory, and the global ones fall to 2 (8 + W)^3 per subproblem. A grid
// cell's sum is now a short chain per subproblem, then one add each: --tolerance 1e-6 holds
// on large, where 12's hundreds of float atomics per cell floor the error at 6e-6.
// The kernel, its width from --tolerance, the FFT and the deapodization are 12's.
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
  return {"13_binned_spread", "Gridding: samples sorted into bins, each bin spread in shared memory", true,
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

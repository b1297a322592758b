// mri 10_phase_recurrence: beyond the book. At 09 the loop runs at the MUFU pipe's pace: two
// MUFU per pair. But the voxels lie on a Cartesian grid, x_j = x_0 + j/nx along a row, so
//   e^{i 2 pi k.x_j} = e^{i 2 pi k.x_0} e^{i j delta},  delta = 2 pi kx / nx,
// and the rotation e^{i delta} is the same for every thread: cmpMu computes it once per
// sample. A thread now owns --voxels consecutive voxels of a row; per sample it calls
// __sincosf once, for its first voxel, and reaches the others by the rotation, written as the
// two-term recurrence  w_{j+1} = 2 cos(delta) w_j - w_{j-1}  (one FFMA per component per
// voxel, where a complex multiply costs four). Rounding errors grow along the recurrence, so
// each thread re-seeds it with __sincosf at every sample: the drift spans at most --voxels
// steps. A thread per --voxels voxels is too few threads to fill the GPU on 64^3 voxels, so
// the samples are also split into slices (blockIdx.y) whose partial sums a second kernel adds.
// Voxels that are not such a grid (Parboil's inputs) are bad input for this step: exit 2.
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

#include <cmpMu.cuh>

#include <cmpFhDRecurrence.cuh>

#include <sumSlices.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"10_phase_recurrence", "One sin/cos per sample per thread, the rest by recurrence", true,
          Accuracy::fast,
          {{"threads", 128, 32, 1024, "Threads per block (= samples per tile)"},
           {"voxels", 16, 1, 16, "Voxels per thread along x: 1, 2, 4, 8 or 16"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "voxels")));
}

}  // namespace mri

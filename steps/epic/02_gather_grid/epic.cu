// epic 02_gather_grid: 01's pipeline with the gridding turned around, from a scatter to a
// gather. Per batch of samples of a gulp:
//   copy      the batch's voltage bytes, pinned host memory -> device
//   grid      one thread per (sample, channel, pol, cell): the sum over the stands whose
//             support covers the cell (per-channel lists made once in load()), written once.
//             Every cell is assigned, so no memset and no atomics
//   fft       one batched cuFFT plan: every grid of the batch, inverse, in place
//   multiply  one thread per (sample, channel, pixel): the products of F_X and F_Y, written per
//             sample (the memo's XGrid)
//   reduce    one thread per (plane, channel, pixel): sum the batch's samples into the image
// and once per run, after the last gulp, `finish`: subtract the autocorrelations (summed per
// stand in `autos` kernels as the batches go) and apply the grid correction. CUDA events time
// every phase (the breakdown goes into the record) and NVTX ranges name them in Nsight Systems.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <vector>

#include "core/device_array.cuh"
#include "epic/gpu.cuh"
#include "core/portable.hpp"
#include "epic/step.hpp"
#include "epic/voltage.hpp"

namespace epic {
namespace {

#include <grid_cells.cuh>

#include <cross_multiply.cuh>

#include <reduce_samples.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"02_gather_grid", "GPU, 01's pipeline with each cell gathered from its stands: no grid memset, no atomics",
          true, Accuracy::fp32,
          {{"batch", 250, 1, 4000, "Samples per batched FFT (at most the samples of a gulp)"},
           {"threads", 256, 32, 1024, "Threads per block of every kernel"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuPipeline>(core::tunable(t, "batch"), core::tunable(t, "threads"));
}

}  // namespace epic

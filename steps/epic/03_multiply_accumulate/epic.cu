// epic 03_multiply_accumulate: 02's pipeline with the products summed where they are made.
// Per batch of samples of a gulp:
//   copy      the batch's voltage bytes, pinned host memory -> device
//   grid      one thread per (sample, channel, pol, cell): the sum over the stands whose
//             support covers the cell (per-channel lists made once in load()), written once.
//             Every cell is assigned, so no memset and no atomics
//   fft       one batched cuFFT plan: every grid of the batch, inverse, in place
//   multiply  one thread per (channel, pixel): the products of every sample of the batch summed
//             in registers and added to the image in place (the first batch assigns): no
//             per-sample products and no reduce pass
// and once per run, after the last gulp, `finish`: subtract the autocorrelations (summed per
// stand in `autos` kernels as the batches go, the first batch assigning) and apply the grid
// correction. CUDA events time every phase (the breakdown goes into the record) and NVTX
// ranges name them in Nsight Systems.
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

#include <multiply_accumulate.cuh>


#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"03_multiply_accumulate", "GPU, 02's pipeline with the products summed in registers and added to the image in place",
          true, Accuracy::fp32,
          {{"batch", 250, 1, 4000, "Samples per batched FFT (at most the samples of a gulp)"},
           {"threads", 256, 32, 1024, "Threads per block of every kernel"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuPipeline>(core::tunable(t, "batch"), core::tunable(t, "threads"));
}

}  // namespace epic

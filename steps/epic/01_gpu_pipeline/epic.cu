// epic 01_gpu_pipeline: the EPIC memo's first GPU version, phase by phase, each phase a pass
// over global memory. Per batch of samples of a gulp:
//   copy      the batch's voltage bytes, pinned host memory -> device
//   memset    zero the grids (samples x channels x pols grids of N x N complex)
//   grid      one thread per (sample, channel, stand, pol): decode, weight, atomicAdd into the
//             stand's S x S cells
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
#include <cstring>

#include "core/device_array.cuh"
#include "epic/gpu.cuh"
#include "core/portable.hpp"
#include "epic/step.hpp"
#include "epic/voltage.hpp"

namespace epic {
namespace {

#include <grid_voltages.cuh>

#include <cross_multiply.cuh>

#include <reduce_samples.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"01_gpu_pipeline", "GPU, the memo's pipeline: memset, grid with atomics, batched cuFFT, cross-multiply, reduce",
          true, Accuracy::fp32,
          {{"batch", 250, 1, 4000, "Samples per batched FFT (at most the samples of a gulp)"},
           {"threads", 256, 32, 1024, "Threads per block of every kernel"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuPipeline>(core::tunable(t, "batch"), core::tunable(t, "threads"));
}

}  // namespace epic

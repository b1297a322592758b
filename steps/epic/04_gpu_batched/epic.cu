// epic 04_gpu_batched: 03's pipeline with the whole gulp as one batch. Per gulp:
//   copy      the gulp's voltage bytes, pinned host memory -> device, on a second stream: the
//             next gulp's copy runs while this gulp computes (two device buffers)
//   grid      one thread per (sample, channel, pol, cell): the sum over the stands whose
//             support covers the cell (per-channel lists made once in load()), written once.
//             Every cell is assigned, so no memset and no atomics
//   fft       one batched cuFFT plan for the whole gulp, inverse, in place
//   multiply  one thread per (channel, pixel): the products of every sample of the gulp summed
//             in registers and added to the image in place (the first gulp assigns), as in 03
// and once per run, after the last gulp, `finish` as in 01. The autocorrelations are summed
// per stand as in 03, the first gulp assigning.
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
  return {"04_gpu_batched", "GPU, 03's kernels on the whole gulp: one FFT plan a gulp, the next gulp's copy overlapped",
          true, Accuracy::fp32, {{"threads", 256, 32, 1024, "Threads per block of every kernel"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<GpuBatched>(core::tunable(t, "threads")); }

}  // namespace epic

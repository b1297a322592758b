// ae 07_gpu_tiled: 06's kernels, with what the step still spent outside them trimmed. The loss
// is written as block sums and added by 06's summing kernel, in a fixed order (04-06 zeroed it
// with a memset and added atomically, so its last bits varied from run to run); and the
// backward pass's gradients live in two buffers used in turn, not ten (each is needed only to
// make the next one; the reconstruction and then its gradient share the first). Pooling,
// upsampling, ReLU (in place), that loss kernel and SGD are the NCHW steps' shared element-wise
// kernels (common/ae/elementwise.cuh), as in 04-06 and 15.
#include <algorithm>
#include <string>

#include "ae/elementwise.cuh"

namespace ae {
namespace {

#include <tile_geometry.cuh>

#include <conv_tiled.cuh>

#include <GradientGeometry.cuh>

#include <StagingLanes.cuh>
#include <stage_planes.cuh>

#include <conv_weight_gradient.cuh>

#include <sum_partials.cuh>

#include <arrange_weights.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"07_gpu_tiled", "GPU: convolutions tiled in shared memory (halo, several channels per thread)", true,
          Accuracy::fp32,
          {{"threads", 256, 32, 1024,
            "Threads per block of the element-wise kernels (a multiple of 32, a power of 2 for the loss reduction)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  return std::make_unique<GpuTiled>(int(threads));
}

}  // namespace ae

// ae 18_upsampled_reads: 17's fused training step, with conv4 and conv5 (and their weight
// gradients) reading the half-resolution activations they upsample.
//
// 17 wrote a3 and a4 upsampled (u3, u4: four copies of each value) for conv4 and conv5 to read,
// forward and for their weight gradients. Here those convolutions read pixel (y, x) of their
// input at (y/2, x/2) of a3 or a4 as they stage it (Input::upsampled): the upsampled planes
// are neither written nor kept, and what the staging reads is a quarter of the bytes (the
// same values from L1 and L2 four times).
#include <algorithm>
#include <array>
#include <string>

#include "ae/gpu_training.cuh"

namespace ae {
namespace {

#include <tile_geometry.cuh>

#include <Epilogue.cuh>

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
  return {"18_upsampled_reads", "GPU: element-wise layers fused into the convolutions, conv4 and conv5 read at half resolution",
          true, Accuracy::fp32,
          {{"threads", 256, 32, 1024, "Threads per block of SGD and the weight arrangement (a multiple of 32)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a multiple of 32 from 32 to 1024");
  return std::make_unique<GpuFused>(int(threads));
}

}  // namespace ae

// ae 20_cuda_graph: 19's fused training step, recorded once as a CUDA graph that train()
// launches once per step.
//
// 19 launched a step's kernels from the host, each with the step's own arguments (the
// minibatch's address, where the loss goes). Here the step counter lives on the device: a
// kernel copies minibatch t into a fixed buffer (gather_minibatch), and the loss's kernel
// writes losses[t] and advances t (record_loss). Nothing in a step then changes from one step
// to the next or waits for the host, so the minibatch's copy, the 5 forward and 10 backward
// convolutions, the loss, the weight gradients' sums and the updates are captured once, in
// load(), and reach the GPU as one submission.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

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

#include <gather_minibatch.cuh>

#include <record_loss.cuh>

#include <sgd_arranged.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"20_cuda_graph", "GPU: element-wise layers fused into the convolutions, a training step as one CUDA graph", true,
          Accuracy::fp32,
          {{"threads", 256, 32, 1024, "Threads per block of the minibatch copy, SGD and weight arrangement (a multiple of 32)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a multiple of 32 from 32 to 1024");
  return std::make_unique<GpuFused>(int(threads));
}

}  // namespace ae

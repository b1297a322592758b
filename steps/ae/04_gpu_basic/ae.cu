// ae 04_gpu_basic: the whole training step on the GPU, the plainest way that is correct. One
// thread per output element of every layer, the whole minibatch in each launch, every buffer
// on the device from load() to store(): a training step is a sequence of launches on one
// stream with no copy and no synchronization in between. A weight gradient's thread sums its
// element over every pixel of every image of the batch, so the batch's gradient is one sum,
// written once: nothing to zero, nothing overwritten, no atomics.
#include "ae/elementwise.cuh"

namespace ae {
namespace {

#include <conv_forward.cuh>

#include <conv_input_gradient.cuh>

#include <conv_weight_gradient.cuh>

#include <bias_gradient.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"04_gpu_basic", "GPU: a thread per output element, the whole batch per launch", true, Accuracy::fp32,
          {{"threads", 256, 32, 1024, "Threads per block (a multiple of 32, a power of 2 for the loss reduction)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  return std::make_unique<GpuBasic>(int(threads));
}

}  // namespace ae

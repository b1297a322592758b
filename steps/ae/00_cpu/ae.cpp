// ae 00_cpu: the baseline. One thread, float, direct loops: every layer is the loop nest of
// its definition. A minibatch is trained one image at a time: the image's forward pass keeps
// its activations, its backward pass reads exactly those and adds the image's share to the
// weight and bias gradients; after the last image, one SGD step with the batch's gradient.
// ReLU, pooling and upsampling are loops the CPU steps share: common/ae/elementwise_cpu.hpp.
#include <algorithm>
#include <cstring>

#include "ae/elementwise_cpu.hpp"
#include "ae/step.hpp"

namespace ae {
namespace {

#include <conv_forward.hpp>

#include <conv_backward.hpp>

#include <host.hpp>

}  // namespace

StepInfo step_info() { return {"00_cpu", "CPU, one thread: direct loops, one image at a time", false, Accuracy::fp32, {}}; }

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<Cpu>(); }

}  // namespace ae

// ae 01_cpu_omp: 00's loops, every core. OpenMP over the images of a minibatch: each thread
// trains whole images (forward and backward) into its own activations and adds their weight
// gradients into its own buffer; the buffers are summed in thread order after the batch (a
// reduction, not shared sums), then one SGD step. The layers are 00's, unchanged.
#include <omp.h>

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

StepInfo step_info() { return {"01_cpu_omp", "CPU, OpenMP over images: 00's loops, a gradient buffer per thread", false, Accuracy::fp32, {}}; }

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<CpuOmp>(); }

}  // namespace ae

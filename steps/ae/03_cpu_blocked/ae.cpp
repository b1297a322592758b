// ae 03_cpu_blocked: 02's matrix products, register-blocked. im2col lays the 3x3
// neighbourhoods of a layer's input out as a (in x 9) x pixels matrix, and one product routine
// serves the forward pass, the weight gradient and the input gradient (flipped weights).
// The product keeps tiles of 4 x 32 of C in registers. OpenMP over the images as in 01.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "ae/elementwise_cpu.hpp"
#include "ae/step.hpp"

namespace ae {
namespace {

#include <im2col.hpp>

#include <im2col_transposed.hpp>

#include <conv_forward.hpp>

#include <conv_backward.hpp>

#include <host.hpp>

}  // namespace

StepInfo step_info() { return {"03_cpu_blocked", "CPU, OpenMP over images: im2col, register-blocked matrix products", false, Accuracy::fp32, {}}; }

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<CpuOmp>(); }

}  // namespace ae

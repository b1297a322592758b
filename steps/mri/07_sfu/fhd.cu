// mri 07_sfu: sin and cos from the special function units. The accurate sinf/cosf are
// software: range reduction plus a polynomial, a few dozen instructions each, and they were
// the bulk of every iteration. __sincosf is one multiply and two MUFU instructions (MUFU.SIN,
// MUFU.COS), with an absolute error that grows with the argument's magnitude: this step
// belongs to the "fast" accuracy class (steps/mri/README.md).
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

#include <cmpMu.cuh>

#include <cmpFhD.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"07_sfu", "sin/cos on the special function units (__sincosf)", true,
          Accuracy::fast, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri

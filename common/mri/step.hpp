// The interface every MRI step implements. The harness (main.cpp) owns everything else:
// flags, the problem, timing, validation, output and results.
//
// A step source file defines step_info() and make_step(); nothing more is needed for it to
// become a program `mri_NN_name`.
#pragma once
#include <memory>
#include <string>

#include "core/fields.hpp"
#include "core/step_info.hpp"
#include "mri/kernel.hpp"

namespace mri {

// What the kernels read: structures of arrays in float (the lecture's layout). Steps that
// want another layout build it in load().
struct Inputs {
  Kernel kernel;
  int numK, numX;
  const float *kx, *ky, *kz;
  const float *phiR, *phiI;
  const float *dR, *dI;  // null for Q
  const float *x, *y, *z;
  // The voxel grid (Problem::grid) when the voxels are one, else zeros: x_i = (i - nx/2)/nx,
  // voxel index (iz * ny + iy) * nx + ix.
  int nx = 0, ny = 0, nz = 0;
};

// Accuracy classes and their thresholds are documented in steps/mri/README.md.
enum class Accuracy {
  exact,     // libm-accurate sin/cos in float
  fast,      // special-function-unit sin/cos or phase recurrences
  gridding,  // an approximate sum: the adjoint NUFFT by Kaiser-Bessel gridding (11)
  tolerance,  // an approximate sum whose relative L2 error the step's --tolerance bounds (12)
};

using StepInfo = core::StepInfo<Accuracy>;

class Step {
 public:
  virtual ~Step() = default;
  // Allocate (first call only) and copy the inputs to where compute() reads them.
  virtual void load(const Inputs& in) = 0;
  // The algorithm; the harness times exactly this call.
  virtual void compute() = 0;
  // Copy the result (numX complex values as re/im arrays) back to the host.
  virtual void store(float* outR, float* outI) = 0;
  // What the step chose or measured itself (a kernel width, a plan's time); it goes into the
  // record's "params" beside the flags.
  virtual void describe(core::Fields& params) const { (void)params; }
};

StepInfo step_info();
std::unique_ptr<Step> make_step(const core::Tunables& tunables);

}  // namespace mri

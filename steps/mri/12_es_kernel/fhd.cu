// mri 12_es_kernel: 11's gridding with the kernel of FINUFFT and cuFINUFFT, the "exponential
// of semicircle" phi(z) = exp(beta (sqrt(1 - z^2) - 1)) (common/mri/es_kernel.hpp), and its
// width chosen from the accuracy asked for: --tolerance t gives the narrowest kernel whose
// aliasing stays under t at sigma = 2 (about one cell per decade: W = 6 at 1e-4, 7 at 1e-5),
// and validation checks the relative L2 error against t itself (accuracy class `tolerance`).
// 1e-5 is the tightest t it accepts: on large a grid cell sums hundreds of float atomic adds,
// and that rounding alone measured 6e-6.
// Each weight is an expf and a sqrtf where 11 evaluated a Bessel I0; the spread, the FFT and
// the deapodization are 11's (the kernel's transform now by quadrature, on the host).
// Voxels that are not a grid (Parboil's inputs) are bad input for this step: exit 2.
#include <cmath>

#include "mri/device_problem.cuh"
#include "mri/oversampled_grid.cuh"
#include "mri/es_kernel.hpp"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

#include <spread.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"12_es_kernel", "Gridding: the exponential-of-semicircle kernel, its width from --tolerance", true,
          Accuracy::tolerance,
          {{"threads", 256, 32, 1024, "Threads per block"},
           {"tolerance", 1e-4, 1e-5, 1e-2, "Relative L2 error allowed against the direct sum (sets the kernel width)",
            false}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GriddingStep>(int(core::tunable(t, "threads")), core::real_tunable(t, "tolerance"));
}

}  // namespace mri

// mri 11_gridding: beyond the direct sum. Every step before this one evaluates
//   F^H d(x_n) = sum_m mu_m e^{i 2 pi k_m . x_n}
// exactly, M x N terms. On a Cartesian grid of voxels it is an adjoint non-uniform FFT, which
// practitioners compute by gridding (steps/mri/recon/gridding.hpp has the CPU twin;
// common/mri/kaiser_bessel.hpp the kernel both use and its error bound):
//   1. spread: each sample adds mu_m times a Kaiser-Bessel kernel W cells wide to the W^3
//      cells around it on a grid oversampled sigma times (one thread per sample, float
//      atomics: at sigma 2 the grid of a 64^3 image is 16 MB and stays in L2),
//   2. one inverse 3D FFT of the grid (cuFFT),
//   3. deapodize: divide each voxel's bin by the kernel's transform, keep the central n^3
//      (2. and 3., which every later gridding step repeats: common/mri/oversampled_grid.cuh).
// O(M W^3 + G log G) instead of O(M N): the price is an approximation, whose error falls with
// W and sigma (accuracy class `gridding`: 5e-4 relative L2 against the direct sum).
// Voxels that are not a grid (Parboil's inputs) are bad input for this step: exit 2.
#include <cmath>

#include "mri/device_problem.cuh"
#include "mri/oversampled_grid.cuh"
#include "mri/kaiser_bessel.hpp"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

#include <spread.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"11_gridding", "Gridding: Kaiser-Bessel spreading onto an oversampled grid, cuFFT, deapodization", true,
          Accuracy::gridding,
          {{"threads", 256, 32, 1024, "Threads per block"},
           {"kernel-width", 4, 2, kMaxWidth, "Kaiser-Bessel kernel width W in grid cells"},
           {"oversampling", 2.0, 1.25, 3.0, "Grid oversampling sigma", false}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GriddingStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "kernel-width")),
                                        core::real_tunable(t, "oversampling"));
}

}  // namespace mri

// Gridding, the adjoint non-uniform FFT, on the CPU: out_n = sum_m c_m e^{i 2 pi k_m . x_n} on
// the voxel grid of a problem, in O(M W^3 + G log G) instead of the direct O(M N).
//   1. spread every c_m onto a Cartesian k-space grid oversampled sigma times (G = sigma n
//      points per axis, spacing 1/sigma cycles/FOV) with a kernel W cells wide: Kaiser-Bessel,
//      or the "exponential of semicircle" of FINUFFT with W chosen from a tolerance;
//   2. one inverse FFT of the grid;
//   3. divide by the kernel's Fourier transform (deapodization) and keep the central n^3.
// The error is the aliasing of the kernel's transform from beyond the image (Jackson et al.
// 1991; Beatty et al. 2005, whose beta this uses): it falls with W and with sigma.
#pragma once
#include <complex>
#include <vector>

#include "mri/es_kernel.hpp"
#include "mri/kaiser_bessel.hpp"
#include "mri/problem.hpp"

namespace mri {

struct GriddingParams {
  int width = 4;             // kernel width W in grid cells (Kaiser-Bessel)
  double oversampling = 2;   // sigma; the grid has the even number of points nearest sigma n from above
  double tolerance = 0;      // > 0: the exponential-of-semicircle kernel for this tolerance instead
                             // (es_kernel_for: its width replaces `width`)
};

// The adjoint NUFFT of weights c (one per sample) on p's voxel grid (UsageError without one).
std::vector<std::complex<double>> gridding_adjoint(const Problem& p,
                                                   const std::vector<std::complex<double>>& c,
                                                   const GriddingParams& g);

// F^H d by gridding: c_m = conj(phi_m) d_m.
std::vector<std::complex<double>> gridding_fhd(const Problem& p, const GriddingParams& g);

// Density compensation of the generated stack of spirals, analytic: the k-space volume each
// sample stands for, |dk/dt| dt along its arm times the spacing of the arms kept (kmax /
// (turns arms_kept)) times the plane spacing 1. Their sum is the sampled cylinder's volume.
// UsageError for problems that are not a generated stack of spirals.
std::vector<double> spiral_density(const Problem& p);

// The gridding reconstruction of the ladder's data: the image sum_m w_m d_m e^{i 2 pi k_m . x_n},
// a Riemann sum of the inverse Fourier transform of d = phi F. Since phi is the voxel box's
// transform, the image is the phantom averaged over the box that ends at x_n (a voxel off the
// box of true_image(); mri_recon's --method gridding weights conj(phi) d instead:
// steps/mri/recon/README.md).
std::vector<std::complex<double>> gridding_recon(const Problem& p, const GriddingParams& g);

}  // namespace mri

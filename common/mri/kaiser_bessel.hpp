// The Kaiser-Bessel gridding kernel: its shape, its Fourier transform (for deapodization) and
// the aliasing it lets through. Shared by the GPU rung 11_gridding and the reconstruction's CPU
// gridding (steps/mri/recon/gridding.hpp); no FFT here, so the rung needs no FFTW.
#pragma once

namespace mri {

// Beatty et al. (2005): beta = pi sqrt(W^2 / sigma^2 (sigma - 1/2)^2 - 0.8). UsageError when
// the root is not real (W too small for sigma).
double kaiser_bessel_beta(int width, double oversampling);
// Kernel at u grid cells from the sample (0 outside |u| <= W/2) and its Fourier transform at
// nu cycles per grid cell: W sinh(z)/z, z = sqrt(beta^2 - (pi W nu)^2) (sin when z is imaginary).
double kaiser_bessel(double u, int width, double beta);
double kaiser_bessel_transform(double nu, int width, double beta);

// The aliasing the kernel lets through, relative to the signal, at the worst voxel:
// max over |x| <= 1/2 of sum_{p != 0} |Phi(x/sigma + p)| / Phi(x/sigma). The error of
// gridding_adjoint against the direct sum, relative to sum_m |c_m|, stays below it.
double gridding_error_bound(int width, double oversampling);

// Points per axis of the oversampled grid for n voxels.
int oversampled_size(int n, double oversampling);

}  // namespace mri

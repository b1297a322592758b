// The "exponential of semicircle" (ES) gridding kernel of FINUFFT and cuFINUFFT (Barnett,
// Magland and af Klinteberg, SIAM J. Sci. Comput. 41, 2019):
//   phi(z) = exp(beta (sqrt(1 - z^2) - 1)) for |z| <= 1, 0 outside, z = 2u/W,
// u the distance in grid cells from the sample. Its width W comes from the tolerance asked
// for: the aliasing falls about like exp(-pi W sqrt(1 - 1/sigma)), so W grows by one cell per
// decade of accuracy at sigma = 2. It has no closed-form Fourier transform; deapodization
// integrates it numerically (Gauss-Legendre), once per voxel index and axis.
// Shared by the reconstruction's CPU gridding and the GPU gridding rungs; no FFT here.
#pragma once

namespace mri {

struct EsKernel {
  int width = 0;       // W, grid cells
  double beta = 0;     // the shape: about 2.3 W at sigma = 2
  double oversampling = 2;
};

// The kernel for a relative tolerance and an oversampling sigma. W = the smallest width with
// exp(-pi W sqrt(1 - 1/sigma)) <= tolerance, at least 2; beta = 0.976 pi W (1 - 1/(2 sigma)),
// 2.30 W at sigma = 2 (the paper's choice). UsageError outside 1e-2 >= tolerance >= 1e-7 or
// 1.25 <= sigma <= 4 (W is then at most 12). At sigma = 2 the relative L2 error of gridding
// stays below the tolerance (steps/mri/recon/README.md); at sigma = 1.25 this W falls short.
EsKernel es_kernel_for(double tolerance, double oversampling);

// phi at u grid cells from the sample (0 outside |u| <= W/2).
double es_kernel(double u, const EsKernel& k);
// Its Fourier transform at nu cycles per grid cell: integral of phi(2u/W) e^{-i 2 pi nu u} du,
// by Gauss-Legendre quadrature on 200 nodes.
double es_kernel_transform(double nu, const EsKernel& k);

}  // namespace mri

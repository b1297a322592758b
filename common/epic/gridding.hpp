// Gridding kernels, their grid correction, and the gridding plan: which cells of the N x N
// aperture grid each stand's voltage goes to, with which weights, in every channel.
//
// A stand at east e metres lies at p = e / (lambda * grid_spacing) cells (grid_spacing in
// wavelengths per cell; north likewise). With support S it is spread over the S cells
// k0 .. k0 + S - 1, k0 = floor(p - S/2) + 1 (the S cells nearest p), with the separable weights
// C(k - p) C(k' - q). The grid is periodic: cells are taken modulo N. That is exact, not an
// approximation: the image is only ever evaluated at its pixel centres l_j = j / (N grid_spacing),
// where moving a stand by N cells changes its phase exp(2 pi i k j / N) by exp(2 pi i j) = 1.
//
// Kernels C (unit integral):
//   delta          support 1: the nearest cell, weight 1 (no grid correction)
//   pswf           the zero-order prolate spheroidal wave function psi_0(c, 2t/S), c = pi S / 2:
//                  of all functions of support S it concentrates most of its transform in the
//                  image, |f| <= 1/2 (Schwab 1984)
//   kaiser-bessel  I0(beta sqrt(1 - (2t/S)^2)), beta = pi S / 2: the close approximation of the
//                  prolate at the same concentration (Jackson et al. 1991)
// Grid correction: the image of a stand gridded with C is, to aliasing, its true image times
// C^(x) C^(y), with C^(f) = int C(t) exp(2 pi i f t) dt at the pixel's f = j/N in [-1/2, 1/2);
// a power image therefore carries C^(x)^2 C^(y)^2, which the correction divides out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "epic/station.hpp"

namespace epic {

enum class KernelKind { delta, pswf, kaiser_bessel };
const char* kernel_name(KernelKind k);  // "delta", "pswf", "kaiser-bessel"

class GriddingKernel {
 public:
  // support 1 is always the delta (the nearest cell); `kind` chooses the kernel for 2 and 3.
  GriddingKernel(KernelKind kind, int support);
  KernelKind kind() const { return kind_; }
  int support() const { return support_; }
  // C(t), zero outside |t| <= support/2; integral 1.
  double operator()(double t) const;
  // C^(f) = int C(t) cos(2 pi f t) dt (C is even), by quadrature; C^(0) = 1.
  double transform(double f) const;

 private:
  double shape(double t) const;  // unnormalized
  KernelKind kind_;
  int support_;
  double beta_ = 0;                 // kaiser-bessel
  std::vector<double> legendre_;   // pswf: coefficients of psi_0 on normalized Legendre P_0, P_2, ...
  double norm_ = 1;                 // 1 / integral of shape
};

// The zero-order prolate spheroidal wave function psi_0(c, eta) on |eta| <= 1, psi_0(c, 0) = 1,
// from its Legendre expansion (the symmetric tridiagonal eigenproblem of Bouwkamp's
// recurrence, smallest eigenvalue).
std::vector<double> prolate_coefficients(double c);
double prolate(const std::vector<double>& coefficients, double eta);
// Modified Bessel function I0 by its power series (arguments up to ~20 are all we use).
double bessel_i0(double x);

// Per-axis grid correction in image order (index i <-> f = (i - N/2)/N): multiply the power
// image's pixel (m, l) by g[m] * g[l], g = 1 / C^(f)^2. All ones for the delta.
std::vector<double> grid_correction(const GriddingKernel& kernel, int n);

// Cells and weights of every stand in every channel.
struct GridPlan {
  int n = 0, support = 0, channels = 0, stands = 0;
  std::vector<int32_t> cell_x, cell_y;   // (channel, stand): first cell k0, in [0, n)
  std::vector<double> weight_x, weight_y;  // (channel, stand, support)
  // Cell positions p before rounding (channel, stand), for tests and the record.
  std::vector<double> pos_x, pos_y;

  size_t at(int channel, int stand) const { return size_t(channel) * stands + stand; }
};

GridPlan make_plan(const Station& station, const std::vector<double>& wavelengths,
                   double grid_spacing, int n, const GriddingKernel& kernel);

}  // namespace epic

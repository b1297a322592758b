// The CPU references, in double precision, independent of any step's gridding and FFT code.
// Both image one channel from its decoded voltages with the problem's gridding plan (cells and
// kernel weights per stand) and grid correction; neither uses an FFT.
//
//   beamformer  per sample, the direct per-stand sum of the kernel's transform at every pixel:
//               F_p(j) = sum_a E_ap A_a(j),  A_a(j) = sum_{cells k of a} C_a(k) exp(+2 pi i k.j/N),
//               then the products of F_X, F_Y summed over the samples. With the delta on integer
//               cells this is exactly the DFT beamformer |sum_a E_a exp(+2 pi i k_a.j/N)|^2.
//   fx          the FX correlator: visibilities V_ab = sum_t E_a conj(E_b) for every ordered pair
//               (autocorrelations included), each gridded at its baseline k_a - k_b modulo N with
//               the product of the two stands' kernels, then one direct 2D DFT. The time-summed
//               EPIC image equals it to rounding: that is the FX identity (Thyagarajan et al.
//               2017). Without autocorrelations, the pairs a = b are left out, which is exact.
//
// Both multiply by their own grid correction (reference_correction), not the one the steps get.
//
// Images are (plane, m, l) in image order: pixel (m, l) is at l = (l - N/2) / (N grid_spacing),
// m likewise; planes as in products.hpp.
#pragma once
#include <complex>
#include <vector>

#include "epic/problem.hpp"

namespace epic {

struct ChannelVoltages {
  int samples = 0, stands = 0, pols = 0;
  std::vector<std::complex<double>> e;  // (t, a, p)
  const std::complex<double>& at(int t, int a, int p) const { return e[(size_t(t) * stands + a) * pols + p]; }
};
ChannelVoltages decode_channel(const Problem& p, int channel);

// One channel of a gridding plan as the references read it.
struct ChannelGrid {
  int n = 0, support = 0, stands = 0;
  const int32_t *cell_x = nullptr, *cell_y = nullptr;
  const double *weight_x = nullptr, *weight_y = nullptr;  // (stand, support)
};
ChannelGrid channel_grid(const GridPlan& plan, int channel);

std::vector<double> beamformer_image(const ChannelVoltages& v, const ChannelGrid& g, const std::vector<Product>& products,
                                     bool remove_autos, const std::vector<double>& correction);
std::vector<double> fx_image(const ChannelVoltages& v, const ChannelGrid& g, const std::vector<Product>& products,
                             bool remove_autos, const std::vector<double>& correction);

// No gridding at all: the power of polarization `pol` beamformed at each pixel centre from the
// true stand positions, sum_t |sum_a E_a exp(+2 pi i (e_a l + n_a m) / lambda)|^2, (m, l).
// What a gridded, grid-corrected image approximates.
std::vector<double> true_beamformer(const ChannelVoltages& v, const Station& station, double lambda, double grid_spacing,
                                    int n, int pol);

// The grid correction by a route of its own, sharing no code with gridding.cpp's
// grid_correction (which the steps get): per axis in image order, g[i] = 1 / C^(f)^2 at
// f = (i - N/2) / N, C^ the kernel's continuous transform with C^(0) = 1. The Kaiser-Bessel
// window's transform in closed form, (sinh z / z) / (sinh beta / beta), z^2 = beta^2 - (pi S f)^2;
// the prolate's from its being its own finite Fourier transform, C^(f) = psi_0(c, 2f) / psi_0(c, 0),
// with psi_0 the dominant eigenfunction of the integral operator int cos(c x y) psi(y) dy on
// [-1, 1], found by power iteration on Gauss-Legendre nodes (Nystrom). All ones for the delta
// (support 1).
std::vector<double> reference_correction(KernelKind kind, int support, int n);

// The FX correlator's zero baseline, per channel: the sum over the pixels of a channel's image
// before the grid correction. By Parseval, sum_j F_p(j) conj(F_q(j)) = N^2 sum_k G_p(k) conj(G_q(k))
// for each sample, and sum_k G_p conj(G_q) = sum_{a,b} E_ap conj(E_bq) W_ab with
// W_ab = sum_k C_a(k) C_b(k) (periodic grid): only the autocorrelations and the pairs of stands
// whose supports overlap contribute. Visibilities in exact integers over every sample of every
// gulp; O(samples x (stands + overlapping pairs)) per channel, so every channel of `large`.
struct ZeroLag {
  int planes = 0, channels = 0;
  std::vector<double> sum;    // (plane, channel): what the image's pixels sum to, uncorrected
  std::vector<double> scale;  // (plane, channel): N^2 times the autocorrelation power of the
                              // plane's polarizations (XX: X's, YY: Y's, I: both, XY*, YX*:
                              // their geometric mean), what a step's rounding is proportional to
  std::vector<int> pairs;     // (channel): ordered pairs of distinct stands that overlap
};
ZeroLag zero_lag(const Problem& p);

enum class ReferenceKind { fx, beamformer };
const char* reference_name(ReferenceKind k);  // "fx-double", "beamformer-double"

// The reference on a set of channels of the problem: (plane, k, m, l) for k over `channels`.
std::vector<double> reference_images(const Problem& p, const std::vector<int>& channels, ReferenceKind kind);

}  // namespace epic

#include "gridding.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/portable.hpp"

namespace mri {

using core::UsageError;
using cplx = std::complex<double>;

std::vector<cplx> gridding_adjoint(const Problem& p, const std::vector<cplx>& c, const GriddingParams& g) {
  if (p.grid[0] == 0) throw UsageError(p.name + ": the voxels are not a Cartesian grid; gridding needs one");
  if (c.size() != p.samples()) throw std::logic_error("gridding_adjoint: one weight per sample");
  // The kernel and its Fourier transform at nu cycles per grid cell.
  const bool es = g.tolerance > 0;
  const EsKernel esk = es ? es_kernel_for(g.tolerance, g.oversampling) : EsKernel{};
  const int W = es ? esk.width : g.width;
  const double beta = es ? esk.beta : kaiser_bessel_beta(g.width, g.oversampling);
  const auto kernel = [&](double u) { return es ? es_kernel(u, esk) : kaiser_bessel(u, W, beta); };
  const auto transform = [&](double nu) { return es ? es_kernel_transform(nu, esk) : kaiser_bessel_transform(nu, W, beta); };
  const int n[3] = {p.grid[0], p.grid[1], p.grid[2]};
  int G[3];
  double sigma[3];
  for (int a = 0; a < 3; ++a) {
    G[a] = oversampled_size(n[a], g.oversampling);
    sigma[a] = double(G[a]) / n[a];  // the grid's own: x = (i - n/2)/n must land on FFT bins
  }
  const size_t cells = size_t(G[0]) * G[1] * G[2];
  fftw_complex* grid = fftw_alloc_complex(cells);
  if (!grid) throw std::bad_alloc();
  std::fill(reinterpret_cast<double*>(grid), reinterpret_cast<double*>(grid) + 2 * cells, 0.0);

  // 1. Spread: sample m sits at s = k sigma grid cells; cells within W/2 take c_m kernel(u).
  std::vector<double> wts[3];
  std::vector<int> idx[3];
  for (int a = 0; a < 3; ++a) { wts[a].resize(W + 1); idx[a].resize(W + 1); }
  int count[3];
  const std::vector<float>* k[3] = {&p.kx, &p.ky, &p.kz};
  for (size_t m = 0; m < p.samples(); ++m) {
    for (int a = 0; a < 3; ++a) {
      const double s = double((*k[a])[m]) * sigma[a];
      const long lo = long(std::ceil(s - 0.5 * W)), hi = long(std::floor(s + 0.5 * W));
      count[a] = 0;
      for (long q = lo; q <= hi; ++q) {
        wts[a][count[a]] = kernel(double(q) - s);
        idx[a][count[a]] = int(((q % G[a]) + G[a]) % G[a]);
        ++count[a];
      }
    }
    const cplx cm = c[m];
    for (int iz = 0; iz < count[2]; ++iz)
      for (int iy = 0; iy < count[1]; ++iy) {
        const double wzy = wts[2][iz] * wts[1][iy];
        const size_t row = (size_t(idx[2][iz]) * G[1] + idx[1][iy]) * G[0];
        for (int ix = 0; ix < count[0]; ++ix) {
          const cplx v = cm * (wzy * wts[0][ix]);
          grid[row + idx[0][ix]][0] += v.real();
          grid[row + idx[0][ix]][1] += v.imag();
        }
      }
  }

  // 2. sum_q b_q e^{+i 2 pi q j / G}: FFTW's backward transform (unnormalized), z slowest.
  fftw_plan plan = fftw_plan_dft_3d(G[2], G[1], G[0], grid, grid, FFTW_BACKWARD, FFTW_ESTIMATE);
  fftw_execute(plan);
  fftw_destroy_plan(plan);

  // 3. Voxel i is at x = (i - n/2)/n, FFT bin j = i - n/2 (mod G); divide by the kernel's
  // transform at nu = x / sigma cycles per grid cell.
  std::vector<double> deapod[3];
  std::vector<int> bin[3];
  for (int a = 0; a < 3; ++a) {
    deapod[a].resize(n[a]); bin[a].resize(n[a]);
    for (int i = 0; i < n[a]; ++i) {
      const int j = i - n[a] / 2;
      deapod[a][i] = 1 / transform(double(j) / n[a] / sigma[a]);
      bin[a][i] = (j + G[a]) % G[a];
    }
  }
  std::vector<cplx> out(p.voxels());
  for (int iz = 0; iz < n[2]; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[0]; ++ix) {
        const size_t cell = (size_t(bin[2][iz]) * G[1] + bin[1][iy]) * G[0] + bin[0][ix];
        out[(size_t(iz) * n[1] + iy) * n[0] + ix] =
            cplx(grid[cell][0], grid[cell][1]) * (deapod[0][ix] * deapod[1][iy] * deapod[2][iz]);
      }
  fftw_free(grid);
  return out;
}

std::vector<cplx> gridding_fhd(const Problem& p, const GriddingParams& g) {
  if (!p.has_data()) throw UsageError(p.name + ": has no k-space data d");
  std::vector<cplx> c(p.samples());
  for (size_t m = 0; m < c.size(); ++m) c[m] = std::conj(cplx(p.phiR[m], p.phiI[m])) * cplx(p.dR[m], p.dI[m]);
  return gridding_adjoint(p, c, g);
}

std::vector<double> spiral_density(const Problem& p) {
  const auto& q = p.params;
  if (!q.is_object() || q.value("trajectory", "") != "stack-of-spirals" || !q.contains("arms") ||
      !q.contains("points_per_arm") || !q.contains("grid"))
    throw UsageError(p.name + ": density compensation is analytic for the generated stack of spirals only");
  const int arms = q["arms"], points = q["points_per_arm"], n = q["grid"];
  const int R = q.value("undersample", 1);
  const double kmax = n / 2.0, turns = std::ceil(kmax / arms);
  const double spacing = kmax * R / (turns * arms);  // radial distance between neighbouring arms kept
  std::vector<double> w(p.samples());
  for (size_t m = 0; m < w.size(); ++m) {
    const double t = std::hypot(double(p.kx[m]), double(p.ky[m])) / kmax;
    // Polar area r dtheta dr per sample; the arms' common first sample at k = 0 shares the
    // disk of half a step's radius.
    w[m] = t * points < 0.5 ? core::kPi * std::pow(kmax / (2.0 * points), 2) * R / arms
                            : 2 * core::kPi * turns * kmax * t * spacing / points;
  }
  return w;
}

std::vector<cplx> gridding_recon(const Problem& p, const GriddingParams& g) {
  if (!p.has_data()) throw UsageError(p.name + ": has no k-space data d");
  const std::vector<double> w = spiral_density(p);
  std::vector<cplx> c(p.samples());
  for (size_t m = 0; m < c.size(); ++m) c[m] = w[m] * cplx(p.dR[m], p.dI[m]);
  return gridding_adjoint(p, c, g);
}

}  // namespace mri

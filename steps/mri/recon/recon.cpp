#include "recon.hpp"

#include <fftw3.h>

#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "mri/phantom.hpp"
#include "core/portable.hpp"
#include "mri/reference.hpp"
#include "mri/weights.hpp"

namespace mri {

using cplx = std::complex<double>;

std::vector<std::string> sum_step_names() { return {"cpu-double", "cpu-single"}; }

cvec cpu_single_sums(const Problem& p, Kernel kernel) {
  const bool q = kernel == Kernel::q;
  const int numK = int(p.samples()), numX = int(p.voxels());
  std::vector<float> rMu(numK), iMu(numK);
  for (int m = 0; m < numK; ++m)
    sample_weight(q, p.phiR[m], p.phiI[m], q ? 0.f : p.dR[m], q ? 0.f : p.dI[m], rMu[m], iMu[m]);
  cvec out(numX);
#pragma omp parallel for schedule(static)
  for (int n = 0; n < numX; ++n) {
    float r = 0, i = 0;
    for (int m = 0; m < numK; ++m) {
      const float arg = 2 * core::kPiF * (p.kx[m] * p.x[n] + p.ky[m] * p.y[n] + p.kz[m] * p.z[n]);
      const float c = std::cos(arg), s = std::sin(arg);
      r += rMu[m] * c - iMu[m] * s;
      i += iMu[m] * c + rMu[m] * s;
    }
    out[n] = {r, i};
  }
  return out;
}

SumStep sum_step(const std::string& name, const std::string& flag) {
  if (name == "cpu-double")
    return [](const Problem& p, Kernel k) {
      std::vector<size_t> all(p.voxels());
      std::iota(all.begin(), all.end(), size_t(0));
      return reference(p, k, all);
    };
  if (name == "cpu-single") return cpu_single_sums;
  std::string known;
  for (const auto& s : sum_step_names()) known += (known.empty() ? "" : ", ") + s;
  throw core::UsageError(flag + " " + name + ": unknown step (known: " + known + ")");
}

// ---- Toeplitz embedding -----------------------------------------------------------------

Toeplitz::Toeplitz(std::array<int, 3> n, const cvec& q2n) : n_(n) {
  const int L[3] = {2 * n[0], 2 * n[1], 2 * n[2]};
  cells_ = size_t(L[0]) * L[1] * L[2];
  if (q2n.size() != cells_) throw std::logic_error("Toeplitz: Q must hold (2n)^3 values");
  fftw_complex* buf = fftw_alloc_complex(cells_);
  if (!buf) throw std::bad_alloc();
  buffer_ = buf;
  forward_ = fftw_plan_dft_3d(L[2], L[1], L[0], buf, buf, FFTW_FORWARD, FFTW_ESTIMATE);
  backward_ = fftw_plan_dft_3d(L[2], L[1], L[0], buf, buf, FFTW_BACKWARD, FFTW_ESTIMATE);
  // The circulant's first column: difference d (in voxels, -n..n-1) at index d mod 2n; Q's
  // voxel j holds difference j - n, so index (j - n) mod 2n = (j + n) mod 2n.
  for (int jz = 0; jz < L[2]; ++jz)
    for (int jy = 0; jy < L[1]; ++jy)
      for (int jx = 0; jx < L[0]; ++jx) {
        const size_t c = (size_t((jz + n[2]) % L[2]) * L[1] + (jy + n[1]) % L[1]) * L[0] + (jx + n[0]) % L[0];
        const cplx v = q2n[(size_t(jz) * L[1] + jy) * L[0] + jx];
        buf[c][0] = v.real(); buf[c][1] = v.imag();
      }
  fftw_execute(static_cast<fftw_plan>(forward_));
  kernel_hat_.resize(cells_);
  for (size_t c = 0; c < cells_; ++c) kernel_hat_[c] = cplx(buf[c][0], buf[c][1]) / double(cells_);
}

Toeplitz::~Toeplitz() {
  fftw_destroy_plan(static_cast<fftw_plan>(forward_));
  fftw_destroy_plan(static_cast<fftw_plan>(backward_));
  fftw_free(buffer_);
}

void Toeplitz::apply(const cvec& rho, cvec& out) const {
  const int L[3] = {2 * n_[0], 2 * n_[1], 2 * n_[2]};
  fftw_complex* buf = static_cast<fftw_complex*>(buffer_);
  std::fill(&buf[0][0], &buf[0][0] + 2 * cells_, 0.0);
  for (int iz = 0; iz < n_[2]; ++iz)
    for (int iy = 0; iy < n_[1]; ++iy)
      for (int ix = 0; ix < n_[0]; ++ix) {
        const cplx v = rho[(size_t(iz) * n_[1] + iy) * n_[0] + ix];
        const size_t c = (size_t(iz) * L[1] + iy) * L[0] + ix;
        buf[c][0] = v.real(); buf[c][1] = v.imag();
      }
  fftw_execute(static_cast<fftw_plan>(forward_));
  for (size_t c = 0; c < cells_; ++c) {
    const cplx v = cplx(buf[c][0], buf[c][1]) * kernel_hat_[c];
    buf[c][0] = v.real(); buf[c][1] = v.imag();
  }
  fftw_execute(static_cast<fftw_plan>(backward_));
  out.resize(voxels());
  for (int iz = 0; iz < n_[2]; ++iz)
    for (int iy = 0; iy < n_[1]; ++iy)
      for (int ix = 0; ix < n_[0]; ++ix) {
        const size_t c = (size_t(iz) * L[1] + iy) * L[0] + ix;
        out[(size_t(iz) * n_[1] + iy) * n_[0] + ix] = cplx(buf[c][0], buf[c][1]);
      }
}

void regularizer(std::array<int, 3> n, const cvec& rho, cvec& out) {
  out.assign(rho.size(), cplx(0));
  const size_t stride[3] = {1, size_t(n[0]), size_t(n[0]) * n[1]};
  for (int iz = 0; iz < n[2]; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[0]; ++ix) {
        const int at[3] = {ix, iy, iz};
        const size_t i = (size_t(iz) * n[1] + iy) * n[0] + ix;
        for (int a = 0; a < 3; ++a) {
          if (at[a] + 1 < n[a]) out[i] += rho[i] - rho[i + stride[a]];  // D^T of (D rho)_i
          if (at[a] > 0) out[i] += rho[i] - rho[i - stride[a]];         // of (D rho)_{i-1}
        }
      }
}

namespace {
double dot_re(const cvec& a, const cvec& b) {  // Re <a, b>; <p, A p> is real for Hermitian A
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i].real() * b[i].real() + a[i].imag() * b[i].imag();
  return s;
}
}  // namespace

CgResult conjugate_gradient(const Toeplitz& fhf, double lambda, const cvec& b, int iterations,
                            const std::function<void(int, double)>& each_iteration) {
  const std::array<int, 3> n = fhf.grid();
  CgResult out;
  out.rho.assign(b.size(), cplx(0));
  cvec r = b, p = b, Ap, Wp;
  const double bb = dot_re(b, b);
  double rr = bb;
  for (int it = 1; it <= iterations; ++it) {
    if (rr == 0) {  // exact solution already (b = 0 or converged to the last bit)
      out.residuals.push_back(0);
      if (each_iteration) each_iteration(it, 0);
      continue;
    }
    fhf.apply(p, Ap);
    if (lambda > 0) {
      regularizer(n, p, Wp);
      for (size_t i = 0; i < Ap.size(); ++i) Ap[i] += lambda * Wp[i];
    }
    const double alpha = rr / dot_re(p, Ap);
    for (size_t i = 0; i < r.size(); ++i) {
      out.rho[i] += alpha * p[i];
      r[i] -= alpha * Ap[i];
    }
    const double rr_next = dot_re(r, r);
    for (size_t i = 0; i < p.size(); ++i) p[i] = r[i] + (rr_next / rr) * p[i];
    rr = rr_next;
    const double rel = bb > 0 ? std::sqrt(rr / bb) : 0;
    out.residuals.push_back(rel);
    if (each_iteration) each_iteration(it, rel);
  }
  return out;
}

cvec shifted_box_image(const Problem& p, double offset, int sub) {
  if (p.grid[0] == 0) throw core::UsageError(p.name + ": the voxels are not a Cartesian grid");
  const int n[3] = {p.grid[0], p.grid[1], p.grid[2]};
  cvec out(p.voxels());
#pragma omp parallel for schedule(dynamic)
  for (long v = 0; v < long(out.size()); ++v) {
    double s = 0;
    for (int a = 0; a < sub; ++a)
      for (int b = 0; b < sub; ++b)
        for (int c = 0; c < sub; ++c)
          s += phantom_density(p.x[v] + (offset + (a + 0.5) / sub) / n[0], p.y[v] + (offset + (b + 0.5) / sub) / n[1],
                               p.z[v] + (offset + (c + 0.5) / sub) / n[2]);
    out[v] = s / (double(sub) * sub * sub);
  }
  return out;
}

cvec true_image(const Problem& p, int sub) { return shifted_box_image(p, 0, sub); }

}  // namespace mri

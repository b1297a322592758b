#include "epic/gridding.hpp"

#include <cmath>
#include <stdexcept>

#include "core/portable.hpp"

namespace epic {

using core::kPi;

const char* kernel_name(KernelKind k) {
  switch (k) {
    case KernelKind::delta: return "delta";
    case KernelKind::pswf: return "pswf";
    case KernelKind::kaiser_bessel: return "kaiser-bessel";
  }
  return "?";
}

double bessel_i0(double x) {
  const double q = 0.25 * x * x;
  double term = 1, sum = 1;
  for (int k = 1; k < 200 && term > 1e-17 * sum; ++k) {
    term *= q / (double(k) * k);
    sum += term;
  }
  return sum;
}

namespace {

// Eigenvector of the smallest eigenvalue of a symmetric tridiagonal matrix (diagonal d,
// off-diagonal e[i] between i and i+1), by cyclic Jacobi rotations on the dense matrix: the
// matrices here are 24 x 24, and Jacobi needs no care about ordering or deflation.
std::vector<double> smallest_eigenvector(const std::vector<double>& d, const std::vector<double>& e) {
  const int n = int(d.size());
  std::vector<double> a(size_t(n) * n, 0.0), v(size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i) {
    a[size_t(i) * n + i] = d[size_t(i)];
    v[size_t(i) * n + i] = 1;
    if (i + 1 < n) a[size_t(i) * n + i + 1] = a[size_t(i + 1) * n + i] = e[size_t(i)];
  }
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) off += a[size_t(p) * n + q] * a[size_t(p) * n + q];
    if (off < 1e-30) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        const double apq = a[size_t(p) * n + q];
        if (std::abs(apq) < 1e-300) continue;
        const double theta = (a[size_t(q) * n + q] - a[size_t(p) * n + p]) / (2 * apq);
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < n; ++k) {  // columns p, q
          const double akp = a[size_t(k) * n + p], akq = a[size_t(k) * n + q];
          a[size_t(k) * n + p] = c * akp - s * akq;
          a[size_t(k) * n + q] = s * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) {  // rows p, q
          const double apk = a[size_t(p) * n + k], aqk = a[size_t(q) * n + k];
          a[size_t(p) * n + k] = c * apk - s * aqk;
          a[size_t(q) * n + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < n; ++k) {
          const double vkp = v[size_t(k) * n + p], vkq = v[size_t(k) * n + q];
          v[size_t(k) * n + p] = c * vkp - s * vkq;
          v[size_t(k) * n + q] = s * vkp + c * vkq;
        }
      }
  }
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (a[size_t(i) * n + i] < a[size_t(best) * n + best]) best = i;
  std::vector<double> out(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) out[size_t(k)] = v[size_t(k) * n + best];
  return out;
}

// Legendre polynomials P_0 .. P_kmax at x, by the three-term recurrence.
void legendre(double x, int kmax, std::vector<double>& p) {
  p.assign(size_t(kmax) + 1, 0.0);
  p[0] = 1;
  if (kmax >= 1) p[1] = x;
  for (int k = 1; k < kmax; ++k) p[size_t(k) + 1] = ((2 * k + 1) * x * p[size_t(k)] - k * p[size_t(k) - 1]) / (k + 1);
}

// Composite Simpson on [-h, h] with 2048 panels: the kernels are smooth (entire functions of
// t^2 inside their support), so this is exact to ~1e-13.
template <class F>
double integrate(F f, double h) {
  const int n = 2048;
  const double dt = 2 * h / n;
  double sum = f(-h) + f(h);
  for (int i = 1; i < n; ++i) sum += (i % 2 ? 4 : 2) * f(-h + i * dt);
  return sum * dt / 3;
}

}  // namespace

std::vector<double> prolate_coefficients(double c) {
  // psi(eta) = sum_k e_k sqrt(k + 1/2) P_k(eta) over even k: Bouwkamp's recurrence on the
  // normalized Legendre basis is symmetric tridiagonal, and psi_0 is the eigenvector of its
  // smallest eigenvalue (chi_0).
  const int terms = 24;
  std::vector<double> d(terms), e(terms - 1);
  const double c2 = c * c;
  for (int i = 0; i < terms; ++i) {
    const double k = 2.0 * i;
    d[size_t(i)] = k * (k + 1) + c2 * (2 * k * (k + 1) - 1) / ((2 * k + 3) * (2 * k - 1));
    if (i + 1 < terms) e[size_t(i)] = c2 * (k + 2) * (k + 1) / ((2 * k + 3) * std::sqrt((2 * k + 1) * (2 * k + 5)));
  }
  std::vector<double> v = smallest_eigenvector(d, e);
  for (int i = 0; i < terms; ++i) v[size_t(i)] *= std::sqrt(2.0 * i + 0.5);  // to plain P_k coefficients
  const double at0 = prolate(v, 0.0);
  for (double& x : v) x /= at0;
  return v;
}

double prolate(const std::vector<double>& coefficients, double eta) {
  std::vector<double> p;
  legendre(eta, 2 * int(coefficients.size()) - 2, p);
  double s = 0;
  for (size_t i = 0; i < coefficients.size(); ++i) s += coefficients[i] * p[2 * i];
  return s;
}

GriddingKernel::GriddingKernel(KernelKind kind, int support) : kind_(support == 1 ? KernelKind::delta : kind), support_(support) {
  if (support < 1 || support > 3) throw std::logic_error("GriddingKernel: support must be 1..3");
  if (kind_ == KernelKind::delta && support != 1) throw std::logic_error("GriddingKernel: the delta has support 1");
  const double c = kPi * support / 2;
  if (kind_ == KernelKind::pswf) legendre_ = prolate_coefficients(c);
  if (kind_ == KernelKind::kaiser_bessel) beta_ = c;
  if (kind_ != KernelKind::delta) norm_ = 1 / integrate([this](double t) { return shape(t); }, support_ / 2.0);
}

double GriddingKernel::shape(double t) const {
  const double h = support_ / 2.0;
  if (std::abs(t) > h) return 0;
  const double eta = t / h;
  switch (kind_) {
    case KernelKind::delta: return 1;
    case KernelKind::pswf: return prolate(legendre_, eta);
    case KernelKind::kaiser_bessel: return bessel_i0(beta_ * std::sqrt(std::max(0.0, 1 - eta * eta)));
  }
  return 0;
}

double GriddingKernel::operator()(double t) const { return norm_ * shape(t); }

double GriddingKernel::transform(double f) const {
  if (kind_ == KernelKind::delta) return 1;
  return integrate([&](double t) { return (*this)(t) * std::cos(2 * kPi * f * t); }, support_ / 2.0);
}

std::vector<double> grid_correction(const GriddingKernel& kernel, int n) {
  std::vector<double> g(size_t(n), 1.0);
  if (kernel.kind() == KernelKind::delta) return g;
  for (int i = 0; i < n; ++i) {
    const double t = kernel.transform(double(i - n / 2) / n);
    g[size_t(i)] = 1 / (t * t);
  }
  return g;
}

GridPlan make_plan(const Station& station, const std::vector<double>& wavelengths, double grid_spacing,
                   int n, const GriddingKernel& kernel) {
  GridPlan plan;
  plan.n = n;
  plan.support = kernel.support();
  plan.channels = int(wavelengths.size());
  plan.stands = station.size();
  const size_t count = size_t(plan.channels) * plan.stands;
  const int S = plan.support;
  plan.cell_x.resize(count);
  plan.cell_y.resize(count);
  plan.pos_x.resize(count);
  plan.pos_y.resize(count);
  plan.weight_x.resize(count * S);
  plan.weight_y.resize(count * S);
  for (int c = 0; c < plan.channels; ++c) {
    const double cells_per_metre = 1 / (wavelengths[size_t(c)] * grid_spacing);
    for (int a = 0; a < plan.stands; ++a) {
      const size_t i = plan.at(c, a);
      const double px = station.east[size_t(a)] * cells_per_metre, py = station.north[size_t(a)] * cells_per_metre;
      plan.pos_x[i] = px;
      plan.pos_y[i] = py;
      const double kx = std::floor(px - S / 2.0) + 1, ky = std::floor(py - S / 2.0) + 1;
      for (int s = 0; s < S; ++s) {
        plan.weight_x[i * S + s] = kernel.kind() == KernelKind::delta ? 1.0 : kernel(kx + s - px);
        plan.weight_y[i * S + s] = kernel.kind() == KernelKind::delta ? 1.0 : kernel(ky + s - py);
      }
      // Modulo n into [0, n): the grid is periodic (see the header).
      plan.cell_x[i] = int32_t(((long long)kx % n + n) % n);
      plan.cell_y[i] = int32_t(((long long)ky % n + n) % n);
    }
  }
  return plan;
}

}  // namespace epic

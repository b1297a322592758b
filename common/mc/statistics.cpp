#include "statistics.hpp"

#include <cmath>
#include <limits>

namespace mc {

ShellStatistics summarize_tally(const Tally& t) {
  ShellStatistics s;
  const int p = t.shells;
  s.shells = p;
  s.mean.assign(p, 0.0);
  s.cov.assign(size_t(p) * p, 0.0);
  s.stderr_of_mean.assign(p, 0.0);
  for (size_t b = 0; b < t.batches(); ++b) {
    const double* row = t.row(b);
    for (int i = 0; i <= p; ++i)
      if (!std::isfinite(row[i])) s.finite = false;
    if (row[p] <= 0) continue;
    ++s.batches;
    s.photons += row[p];
    for (int i = 0; i < p; ++i) s.mean[i] += row[i];
  }
  if (!s.finite || s.photons <= 0) return s;
  for (double& m : s.mean) m /= s.photons;
  if (s.batches < 2) return s;
  std::vector<double> d(p);
  for (size_t b = 0; b < t.batches(); ++b) {
    const double* row = t.row(b);
    const double n = row[p];
    if (n <= 0) continue;
    for (int i = 0; i < p; ++i) d[i] = row[i] - n * s.mean[i];
    const double inv_n = 1 / n;
    for (int i = 0; i < p; ++i) {
      const double di = d[i] * inv_n;
      double* c = &s.cov[size_t(i) * p];
      for (int j = 0; j <= i; ++j) c[j] += di * d[j];
    }
  }
  const double scale = 1.0 / double(s.batches - 1);
  for (int i = 0; i < p; ++i)
    for (int j = 0; j <= i; ++j) {
      const double v = s.cov[size_t(i) * p + j] * scale;
      s.cov[size_t(i) * p + j] = v;
      s.cov[size_t(j) * p + i] = v;
    }
  for (int i = 0; i < p; ++i) s.stderr_of_mean[i] = std::sqrt(s.cov[size_t(i) * p + i] / s.photons);
  return s;
}

HotellingTest hotelling_test(const ShellStatistics& s, const std::vector<double>& expected) {
  HotellingTest h;
  const int p = s.shells;
  const double B = double(s.batches);
  h.dof1 = p;
  h.dof2 = B - p;
  if (!s.finite) {
    h.why = "the tally holds NaN or Inf";
    return h;
  }
  if (B < p + 2) {
    h.why = "only " + std::to_string(s.batches) + " batches for " + std::to_string(p) +
            " shells: the covariance needs at least shells + 2";
    return h;
  }
  // Cholesky factor of the covariance (lower), then solve L y = mean - expected:
  // T^2 = N |y|^2.
  std::vector<double> L(s.cov);
  for (int j = 0; j < p; ++j) {
    double diag = L[size_t(j) * p + j];
    for (int k = 0; k < j; ++k) diag -= L[size_t(j) * p + k] * L[size_t(j) * p + k];
    if (!(diag > 0)) {
      h.why = "the shell covariance is singular (a shell got no deposit in any batch?)";
      return h;
    }
    diag = std::sqrt(diag);
    L[size_t(j) * p + j] = diag;
    for (int i = j + 1; i < p; ++i) {
      double v = L[size_t(i) * p + j];
      for (int k = 0; k < j; ++k) v -= L[size_t(i) * p + k] * L[size_t(j) * p + k];
      L[size_t(i) * p + j] = v / diag;
    }
  }
  std::vector<double> y(p);
  double sum = 0;
  for (int i = 0; i < p; ++i) {
    double v = s.mean[i] - expected[i];
    for (int k = 0; k < i; ++k) v -= L[size_t(i) * p + k] * y[k];
    y[i] = v / L[size_t(i) * p + i];
    sum += y[i] * y[i];
  }
  h.defined = true;
  h.t2 = s.photons * sum;
  h.f = h.t2 * (B - p) / (p * (B - 1));
  h.p_value = f_upper_tail(h.f, h.dof1, h.dof2);
  return h;
}

Estimate linear_estimate(const ShellStatistics& s, const std::vector<double>& a) {
  const int p = s.shells;
  Estimate e;
  double var = 0;
  for (int i = 0; i < p; ++i) {
    e.value += a[i] * s.mean[i];
    for (int j = 0; j < p; ++j) var += a[i] * s.cov[size_t(i) * p + j] * a[j];
  }
  e.stderr = std::sqrt(std::max(var, 0.0) / s.photons);
  return e;
}

namespace {
// Continued fraction of the incomplete beta (modified Lentz).
double beta_fraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 100000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < 1e-15) break;
  }
  return h;
}
}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_fraction(a, b, x) / a;
  return 1 - std::exp(log_front) * beta_fraction(b, a, 1 - x) / b;
}

double f_upper_tail(double f, double d1, double d2) {
  if (!(f > 0)) return 1;
  if (!std::isfinite(f)) return 0;
  // P(F >= f) = I_{d2 / (d2 + d1 f)}(d2 / 2, d1 / 2): no cancellation in the far tail.
  return incomplete_beta(d2 / 2, d1 / 2, d2 / (d2 + d1 * f));
}

double normal_two_sided(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

}  // namespace mc

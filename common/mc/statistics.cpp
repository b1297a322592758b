#include "mc/statistics.hpp"

#include <algorithm>
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
      h.why = "the covariance is singular at bin " + std::to_string(j) +
              ": no batch varies there, though the exact solution expects interactions in it";
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

Tally pool_batches(const Tally& t, size_t factor) {
  Tally pooled;
  const size_t batches = t.batches() / factor;  // a remainder joins the last pooled batch
  pooled.resize(t.shells, std::max<size_t>(batches, t.batches() ? 1 : 0));
  for (size_t b = 0; b < t.batches(); ++b) {
    double* to = pooled.row(std::min(b / factor, pooled.batches() - 1));
    const double* from = t.row(b);
    for (size_t i = 0; i < t.width(); ++i) to[i] += from[i];
  }
  return pooled;
}

Tally bin_shells(const Tally& t, const std::vector<int>& first) {
  Tally binned;
  const int bins = int(first.size());
  binned.resize(bins, t.batches());
  for (size_t b = 0; b < t.batches(); ++b) {
    const double* from = t.row(b);
    double* to = binned.row(b);
    for (int k = 0; k < bins; ++k) {
      const int end = k + 1 < bins ? first[k + 1] : t.shells;
      for (int i = first[k]; i < end; ++i) to[k] += from[i];
    }
    to[bins] = from[t.shells];  // the photon count
  }
  return binned;
}

size_t normalizing_pool_factor(const Tally& t, size_t min_batches) {
  // Per-photon residuals of each batch's total deposit: r_b = (E_b - n_b mean) / sqrt(n_b).
  double energy = 0, photons = 0;
  std::vector<double> e(t.batches()), n(t.batches());
  for (size_t b = 0; b < t.batches(); ++b) {
    const double* row = t.row(b);
    for (int i = 0; i < t.shells; ++i) e[b] += row[i];
    n[b] = row[t.shells];
    energy += e[b];
    photons += n[b];
  }
  if (!(photons > 0)) return 1;
  const double mean = energy / photons;
  double m2 = 0, m4 = 0, used = 0;
  for (size_t b = 0; b < e.size(); ++b) {
    if (n[b] <= 0) continue;
    const double r = (e[b] - n[b] * mean) / std::sqrt(n[b]);
    m2 += r * r;
    m4 += r * r * r * r;
    ++used;
  }
  if (!(m2 > 0) || !std::isfinite(m4)) return 1;  // energy exactly conserved, or no spread
  const double excess_kurtosis = used * m4 / (m2 * m2) - 3;
  size_t factor = 1;
  while (excess_kurtosis / double(factor) > 1 && t.batches() / (2 * factor) >= min_batches) factor *= 2;
  return factor;
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

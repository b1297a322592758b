#include "core/metrics.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace core {

ErrorMetrics compare(const std::vector<std::complex<double>>& ref,
                     const std::vector<std::complex<double>>& test) {
  if (ref.size() != test.size()) throw std::invalid_argument("compare: sizes differ");
  ErrorMetrics m;
  m.count = ref.size();
  double err2 = 0, ref2 = 0, peak = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(test[i].real()) || !std::isfinite(test[i].imag())) m.finite = false;
    const double e = std::abs(test[i] - ref[i]);
    err2 += e * e;
    ref2 += std::norm(ref[i]);
    peak = std::max(peak, std::abs(ref[i]));
    m.max_abs = std::max(m.max_abs, e);
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (!m.finite) {
    m.rel_l2 = m.max_abs = m.mse = inf;
    m.psnr_db = m.snr_db = -inf;
    return m;
  }
  m.mse = m.count ? err2 / m.count : 0;
  m.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 > 0 ? inf : 0);
  m.psnr_db = m.mse > 0 ? 20 * std::log10(peak / std::sqrt(m.mse)) : inf;
  m.snr_db = err2 > 0 ? 10 * std::log10(ref2 / err2) : inf;
  return m;
}

ErrorMetrics compare(const std::vector<double>& ref, const std::vector<double>& test) {
  std::vector<std::complex<double>> r(ref.begin(), ref.end()), t(test.begin(), test.end());
  return compare(r, t);
}

}  // namespace core

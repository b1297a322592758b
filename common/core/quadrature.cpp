#include "core/quadrature.hpp"

#include <cmath>

#include "core/portable.hpp"

namespace core {

Quadrature gauss_legendre(int n) {
  Quadrature q;
  q.x.assign(size_t(n), 0.0);
  q.w.assign(size_t(n), 0.0);
  for (int i = 0; i < n; ++i) {
    double z = std::cos(kPi * (i + 0.75) / (n + 0.5)), dp = 1;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = z;  // P_{k-1}, P_k
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1);  // P_n'(z)
      const double step = p1 / dp;
      z -= step;
      if (std::abs(step) < 1e-16) break;
    }
    q.x[size_t(i)] = z;
    q.w[size_t(i)] = 2 / ((1 - z * z) * dp * dp);
  }
  return q;
}

}  // namespace core

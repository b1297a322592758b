#include "mri/kaiser_bessel.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/portable.hpp"

namespace mri {

using core::UsageError;

double kaiser_bessel_beta(int width, double oversampling) {
  const double s = oversampling;
  const double root = double(width) * width / (s * s) * (s - 0.5) * (s - 0.5) - 0.8;
  if (!(root > 0))
    throw UsageError("--kernel-width " + std::to_string(width) + " is too narrow for --oversampling " +
                     std::to_string(s) + " (the Kaiser-Bessel beta has no real value)");
  return core::kPi * std::sqrt(root);
}

double kaiser_bessel(double u, int width, double beta) {
  const double r = 2 * u / width;
  if (std::abs(r) > 1) return 0;
  return std::cyl_bessel_i(0.0, beta * std::sqrt(1 - r * r));
}

double kaiser_bessel_transform(double nu, int width, double beta) {
  const double a = core::kPi * width * nu;
  const double z2 = beta * beta - a * a;
  if (z2 > 1e-12) { const double z = std::sqrt(z2); return width * std::sinh(z) / z; }
  if (z2 < -1e-12) { const double z = std::sqrt(-z2); return width * std::sin(z) / z; }
  return width;
}

int oversampled_size(int n, double oversampling) {
  const int g = int(std::ceil(oversampling * n - 1e-9));
  return g + (g & 1);
}

double gridding_error_bound(int width, double oversampling) {
  const double beta = kaiser_bessel_beta(width, oversampling);
  double worst = 0;
  // The image is periodic with period sigma on the grid: copies of Phi from p = +-1, +-2, ...
  for (int i = 0; i <= 100; ++i) {
    const double nu = 0.5 * i / 100 / oversampling;
    double alias = 0;
    for (int p = 1; p <= 1000; ++p)
      alias += std::abs(kaiser_bessel_transform(nu + p, width, beta)) +
               std::abs(kaiser_bessel_transform(nu - p, width, beta));
    worst = std::max(worst, alias / kaiser_bessel_transform(nu, width, beta));
  }
  return worst;
}

}  // namespace mri

#include "mri/es_kernel.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/portable.hpp"

namespace mri {

using core::UsageError;

EsKernel es_kernel_for(double tolerance, double oversampling) {
  if (!(tolerance <= 1e-2 && tolerance >= 1e-7))
    throw UsageError("--tolerance " + std::to_string(tolerance) + ": want 1e-2 down to 1e-7");
  if (!(oversampling >= 1.25 && oversampling <= 4))
    throw UsageError("--oversampling " + std::to_string(oversampling) + ": want 1.25 .. 4");
  EsKernel k;
  k.oversampling = oversampling;
  k.width = std::max(2, int(std::ceil(-std::log(tolerance) / (core::kPi * std::sqrt(1 - 1 / oversampling)))));
  k.beta = 0.976 * core::kPi * k.width * (1 - 0.5 / oversampling);
  return k;
}

double es_kernel(double u, const EsKernel& k) {
  const double z = 2 * u / k.width;
  if (std::abs(z) > 1) return 0;
  return std::exp(k.beta * (std::sqrt(1 - z * z) - 1));
}

namespace {

// Gauss-Legendre nodes and weights on [-1, 1]: Newton's method on P_n from Chebyshev guesses.
std::pair<std::vector<double>, std::vector<double>> gauss_legendre(int n) {
  std::vector<double> x(n), w(n);
  for (int i = 0; i < (n + 1) / 2; ++i) {
    double z = std::cos(core::kPi * (i + 0.75) / (n + 0.5)), dp = 0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = z;  // P_0, P_1, then up the recurrence to P_n
      for (int j = 2; j <= n; ++j) {
        const double p2 = ((2 * j - 1) * z * p1 - (j - 1) * p0) / j;
        p0 = p1, p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1);
      const double dz = p1 / dp;
      z -= dz;
      if (std::abs(dz) < 1e-16) break;
    }
    x[i] = -z, x[n - 1 - i] = z;
    w[i] = w[n - 1 - i] = 2 / ((1 - z * z) * dp * dp);
  }
  return {x, w};
}

}  // namespace

double es_kernel_transform(double nu, const EsKernel& k) {
  static const auto nodes = gauss_legendre(200);
  // u = z W / 2: the integral is W/2 times that of phi(z) cos(pi W nu z) over [-1, 1] (phi is even).
  double sum = 0;
  for (size_t i = 0; i < nodes.first.size(); ++i) {
    const double z = nodes.first[i];
    sum += nodes.second[i] * std::exp(k.beta * (std::sqrt(1 - z * z) - 1)) * std::cos(core::kPi * k.width * nu * z);
  }
  return 0.5 * k.width * sum;
}

}  // namespace mri

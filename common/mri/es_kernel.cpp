#include "mri/es_kernel.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/portable.hpp"
#include "core/quadrature.hpp"

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

double es_kernel_transform(double nu, const EsKernel& k) {
  static const core::Quadrature nodes = core::gauss_legendre(200);
  // u = z W / 2: the integral is W/2 times that of phi(z) cos(pi W nu z) over [-1, 1] (phi is even).
  double sum = 0;
  for (size_t i = 0; i < nodes.x.size(); ++i) {
    const double z = nodes.x[i];
    sum += nodes.w[i] * std::exp(k.beta * (std::sqrt(1 - z * z) - 1)) * std::cos(core::kPi * k.width * nu * z);
  }
  return 0.5 * k.width * sum;
}

}  // namespace mri

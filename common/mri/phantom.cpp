#include "mri/phantom.hpp"

#include <cmath>

#include "core/portable.hpp"

namespace mri {

const std::vector<Ellipsoid>& shepp_logan_3d() {
  // Kak & Slaney's table is on [-1, 1]^3; s maps it into the unit field of view.
  constexpr double s = 0.5;
  static const std::vector<Ellipsoid> table = [] {
    const Ellipsoid raw[] = {
        {0, 0, 0, 0.69, 0.92, 0.9, 0, 2.0},
        {0, 0, 0, 0.6624, 0.874, 0.88, 0, -0.98},
        {-0.22, 0, -0.25, 0.41, 0.16, 0.21, 108, -0.02},
        {0.22, 0, -0.25, 0.31, 0.11, 0.22, 72, -0.02},
        {0, 0.35, -0.25, 0.21, 0.25, 0.5, 0, 0.02},
        {0, 0.1, -0.25, 0.046, 0.046, 0.046, 0, 0.02},
        {-0.08, -0.65, -0.25, 0.046, 0.023, 0.02, 0, 0.01},
        {0.06, -0.65, -0.25, 0.046, 0.023, 0.02, 90, 0.01},
        {0.06, -0.105, 0.625, 0.056, 0.04, 0.1, 90, 0.02},
        {0, 0.1, 0.625, 0.056, 0.056, 0.1, 0, -0.02},
    };
    std::vector<Ellipsoid> t;
    for (Ellipsoid e : raw) {
      e.x0 *= s; e.y0 *= s; e.z0 *= s;
      e.a *= s; e.b *= s; e.c *= s;
      t.push_back(e);
    }
    return t;
  }();
  return table;
}

double phantom_density(double x, double y, double z) {
  double f = 0;
  for (const Ellipsoid& e : shepp_logan_3d()) {
    const double th = e.theta_deg * core::kPi / 180, c = std::cos(th), s = std::sin(th);
    const double dx = x - e.x0, dy = y - e.y0, dz = z - e.z0;
    // Body coordinates: R^T (x - x0).
    const double u = (c * dx + s * dy) / e.a, v = (-s * dx + c * dy) / e.b, w = dz / e.c;
    if (u * u + v * v + w * w <= 1) f += e.rho;
  }
  return f;
}

namespace {
// Fourier transform of the unit ball at radial frequency q (cycles): 4 pi (sin u - u cos u)/u^3,
// u = 2 pi q; a series near 0 where the closed form cancels catastrophically.
double unit_ball_transform(double q) {
  const double u = 2 * core::kPi * q;
  if (u < 1e-2) {
    const double u2 = u * u;
    return 4 * core::kPi * (1.0 / 3 - u2 / 30 + u2 * u2 / 840);
  }
  return 4 * core::kPi * (std::sin(u) - u * std::cos(u)) / (u * u * u);
}
}  // namespace

std::complex<double> phantom_transform(double kx, double ky, double kz) {
  std::complex<double> F = 0;
  for (const Ellipsoid& e : shepp_logan_3d()) {
    const double th = e.theta_deg * core::kPi / 180, c = std::cos(th), s = std::sin(th);
    // q = A R^T k: the frequency seen by the unit ball the ellipsoid is made from.
    const double qa = e.a * (c * kx + s * ky), qb = e.b * (-s * kx + c * ky), qc = e.c * kz;
    const double q = std::sqrt(qa * qa + qb * qb + qc * qc);
    const double phase = -2 * core::kPi * (kx * e.x0 + ky * e.y0 + kz * e.z0);
    F += e.rho * e.a * e.b * e.c * unit_ball_transform(q) * std::polar(1.0, phase);
  }
  return F;
}

}  // namespace mri

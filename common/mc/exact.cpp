#include "mc/exact.hpp"

#include <algorithm>
#include <cmath>

#include "core/portable.hpp"
#include "core/quadrature.hpp"

namespace mc {
namespace {

// (sin x - x cos x) / x, accurate for small x too.
double shell_kernel(double x) {
  if (x < 1e-2) {
    const double x2 = x * x;
    return x2 * (1.0 / 3 - x2 * (1.0 / 30 - x2 / 840));
  }
  return std::sin(x) / x - std::cos(x);
}

}  // namespace

double first_flight_transform(double k) {
  if (k < 1e-4) return 1 - k * k / 3;
  return std::atan(k) / k;
}

std::vector<double> mass_within(const std::function<double(double)>& fhat,
                                const std::vector<double>& radii, double kmax) {
  static const core::Quadrature gl = core::gauss_legendre(16);  // 16 nodes on [-1, 1]
  const double rmax = radii.empty() ? 1.0 : *std::max_element(radii.begin(), radii.end());
  // A panel spans at most 8 / rmax in k (under 1.3 periods of cos(k rmax)): 16 nodes
  // integrate that to rounding.
  const double width = std::min(1.0, 8.0 / std::max(rmax, 1e-3));
  const long panels = long(std::ceil(kmax / width));
  std::vector<double> mass(radii.size(), 0.0);
  for (long p = 0; p < panels; ++p) {
    const double a = p * width, half = 0.5 * width;
    for (size_t i = 0; i < gl.x.size(); ++i) {
      const double k = a + half * (1 + gl.x[i]);
      const double weight = half * gl.w[i] * (2 / core::kPi) * fhat(k);
      // (sin kR - kR cos kR) / k = R * shell_kernel(kR)
      for (size_t j = 0; j < radii.size(); ++j) mass[j] += weight * radii[j] * shell_kernel(k * radii[j]);
    }
  }
  return mass;
}

std::vector<double> collided_mass_within(double c, const std::vector<double>& radii) {
  // Remove the k^-2 tail A/(1+k^2), A = c pi^2/4, whose density A e^{-r}/(4 pi r) has
  // mass A (1 - (1 + R) e^{-R}) inside R.
  const double A = c * core::kPi * core::kPi / 4;
  auto remainder = [c, A](double k) {
    const double L = first_flight_transform(k);
    return c * L * L / (1 - c * L) - A / (1 + k * k);
  };
  std::vector<double> mass = mass_within(remainder, radii);
  for (size_t j = 0; j < radii.size(); ++j)
    mass[j] += A * (1 - (1 + radii[j]) * std::exp(-radii[j]));
  return mass;
}

std::vector<double> exact_shell_absorption(const Problem& p) {
  const double c = p.albedo();
  const double d = 1 / p.shells_per_mfp();  // shell width in mean free paths
  std::vector<double> radii(p.shells);      // inner radius of every shell
  for (int i = 0; i < p.shells; ++i) radii[i] = i * d;
  const std::vector<double> collided = collided_mass_within(c, radii);
  std::vector<double> heat(p.shells);
  for (int i = 0; i + 1 < p.shells; ++i) {
    const double first = std::exp(-radii[i]) - std::exp(-radii[i + 1]);
    heat[i] = (1 - c) * (first + collided[i + 1] - collided[i]);
  }
  // Beyond the last inner radius: all that is left (first collisions e^{-R}; collided
  // mass c/(1-c) in total, the transform at k = 0).
  const double R = radii.back();
  heat.back() = (1 - c) * (std::exp(-R) + c / (1 - c) - collided.back());
  return heat;
}

double expected_interactions(const Problem& p) {
  // Weights are deterministic between roulettes: count interactions until the weight falls
  // below the threshold, then continue with probability p and weight / p.
  const double c = p.albedo(), thr = p.weight_threshold, s = p.roulette_survival;
  double expected = 0, alive = 1, weight = 1;
  for (int round = 0; round < 64 && alive > 1e-15; ++round) {
    long n = 0;
    do {
      weight *= c;
      ++n;
    } while (weight >= thr && n < 100000000);
    expected += alive * n;
    alive *= s;
    weight /= s;
  }
  return expected;
}

}  // namespace mc

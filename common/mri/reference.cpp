#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "portable.hpp"

namespace mri {

std::vector<size_t> reference_voxels(const Problem& p, uint64_t seed, double budget, size_t sample) {
  const size_t N = p.voxels();
  std::vector<size_t> all(N);
  std::iota(all.begin(), all.end(), 0);
  if (double(N) * double(p.samples()) <= budget || sample >= N) return all;
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(sample);
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<std::complex<double>> reference(const Problem& p, Kernel kernel,
                                            const std::vector<size_t>& voxels) {
  const size_t M = p.samples();
  // Weights in double: conj(phi) d for F^H d, |phi|^2 for Q.
  std::vector<std::complex<double>> w(M);
  for (size_t m = 0; m < M; ++m) {
    const std::complex<double> phi(p.phiR[m], p.phiI[m]);
    w[m] = kernel == Kernel::q ? std::complex<double>(std::norm(phi), 0.0)
                               : std::conj(phi) * std::complex<double>(p.dR[m], p.dI[m]);
  }
  std::vector<std::complex<double>> out(voxels.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (size_t i = 0; i < voxels.size(); ++i) {
    const size_t n = voxels[i];
    const double x = p.x[n], y = p.y[n], z = p.z[n];
    double re = 0, im = 0;
    for (size_t m = 0; m < M; ++m) {
      const double phase = 2 * core::kPi * (double(p.kx[m]) * x + double(p.ky[m]) * y + double(p.kz[m]) * z);
      const double c = std::cos(phase), s = std::sin(phase);
      re += w[m].real() * c - w[m].imag() * s;
      im += w[m].imag() * c + w[m].real() * s;
    }
    out[i] = {re, im};
  }
  return out;
}

}  // namespace mri

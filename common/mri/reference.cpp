#include "mri/reference.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/portable.hpp"

namespace mri {

std::vector<size_t> edge_voxels(const Problem& p) {
  const size_t N = p.voxels();
  std::vector<size_t> v;
  const auto add = [&](size_t i) { if (i < N) v.push_back(i); };
  // Groups of G consecutive voxels: a block of T threads with V voxels per thread covers
  // G = T * V of them (T from 32 to 1024, V from 1 to 16: powers of two and three times
  // them). Missed guards, off-by-one grids and partial last blocks err at a group's first or
  // last voxel, first at the start of the volume and at its end.
  for (const size_t base : {size_t(32), size_t(96)})
    for (size_t g = base; g <= 16384; g *= 2) {
      add(g - 1); add(g); add(2 * g - 1);
      if (N == 0) continue;
      const size_t last = (N - 1) / g * g;  // first voxel of the last group, full or partial
      if (last >= g) { add(last - g); add(last - 1); }
      add(last);
    }
  add(0);
  add(N - 1);
  // Every warp's first and last voxel in the last 1,024: a step that stops a few warps short.
  for (size_t i = N > 1024 ? N - 1024 : 0; i < N; ++i)
    if (i % 32 == 0 || i % 32 == 31) add(i);
  // On a grid: the first and last voxel of every plane, and of every row of the first and
  // last planes (steps that walk rows, as 10 does, err where a row or plane ends).
  const size_t nx = p.grid[0], ny = p.grid[1], nz = p.grid[2];
  if (nx && ny && nz) {
    for (size_t iz = 0; iz < nz; ++iz) { add(iz * nx * ny); add((iz + 1) * nx * ny - 1); }
    for (const size_t iz : {size_t(0), nz - 1})
      for (size_t iy = 0; iy < ny; ++iy) { add((iz * ny + iy) * nx); add((iz * ny + iy) * nx + nx - 1); }
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<size_t> reference_voxels(const Problem& p, uint64_t seed, double budget, size_t sample) {
  const size_t N = p.voxels();
  std::vector<size_t> all(N);
  std::iota(all.begin(), all.end(), 0);
  if (double(N) * double(p.samples()) <= budget || sample >= N) return all;
  std::vector<size_t> v = edge_voxels(p);
  // Plus `sample` voxels drawn with the seed from the rest: the same ones on every run.
  std::vector<char> taken(N, 0);
  for (size_t i : v) taken[i] = 1;
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::shuffle(all.begin(), all.end(), rng);
  size_t drawn = 0;
  for (size_t i = 0; i < N && drawn < sample; ++i)
    if (!taken[all[i]]) { v.push_back(all[i]); ++drawn; }
  std::sort(v.begin(), v.end());
  return v;
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

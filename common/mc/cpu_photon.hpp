// 00_cpu's photon (tiny_mc's walk in float, one Philox stream per batch) for the programs
// that run it without teaching it: 08_hybrid's host threads, and the CPU walk in r of the
// tests, which shares its absorption and roulette. 00_cpu and 01_cpu_omp keep their own copy,
// which is their lesson; tests/mc requires 08 with --gpu-fraction 0 to give 00's output bit
// for bit, so this copy cannot drift from it.
#pragma once
#include <cmath>

#include "mc/philox.hpp"
#include "mc/problem.hpp"

namespace mc {

// The medium in float, as the walk computes with it.
struct CpuMedium {
  float albedo, shells_per_mfp, threshold, survival;
  unsigned last_shell;
  explicit CpuMedium(const Problem& p)
      : albedo(float(p.albedo())), shells_per_mfp(float(p.shells_per_mfp())), threshold(float(p.weight_threshold)),
        survival(float(p.roulette_survival)), last_shell(unsigned(p.shells - 1)) {}
};

// Deposits at distance `radius` (mean free paths) the weight lost there: w - w c is exact in
// float, so every photon deposits all of its weight.
inline void absorb(const CpuMedium& m, float radius, float& weight, double* heat) {
  const float r = radius * m.shells_per_mfp;
  const unsigned shell = r < float(m.last_shell) ? unsigned(r) : m.last_shell;
  const float kept = weight * m.albedo;
  heat[shell] += weight - kept;
  weight = kept;
}

// Below the threshold, unbiased: the survivors carry the lost weight. False: the photon ends.
inline bool survives_roulette(const CpuMedium& m, PhiloxStream& rng, float& weight) {
  if (weight >= m.threshold) return true;
  if (rng.uniform() > m.survival) return false;
  weight /= m.survival;
  return true;
}

// One photon of tiny_mc: launched at the origin along z, exponential steps, the direction by
// the rejection method (a point uniform in the unit disk).
inline void cpu_photon(const CpuMedium& m, PhiloxStream& rng, double* heat) {
  float x = 0.0f, y = 0.0f, z = 0.0f;
  float u = 0.0f, v = 0.0f, w = 1.0f;
  float weight = 1.0f;
  do {
    float t = -std::log(rng.uniform());
    x += t * u;
    y += t * v;
    z += t * w;
    absorb(m, std::sqrt(x * x + y * y + z * z), weight, heat);

    float xi1, xi2;
    do {
      xi1 = 2.0f * rng.uniform() - 1.0f;
      xi2 = 2.0f * rng.uniform() - 1.0f;
      t = xi1 * xi1 + xi2 * xi2;
    } while (1.0f < t || t == 0.0f);
    u = 2.0f * t - 1.0f;
    v = xi1 * std::sqrt((1.0f - u * u) / t);
    w = xi2 * std::sqrt((1.0f - u * u) / t);
  } while (survives_roulette(m, rng, weight));
}

// Batch b of `batches` over `photons` photons: its own stream, so that its photons do not
// depend on any other batch or on the thread that runs it; the row's last column counts them.
template <class Photon>
void simulate_batch(const Problem& p, uint64_t photons, size_t b, size_t batches, double* row, Photon photon) {
  const uint64_t first = photons * b / batches, last = photons * (b + 1) / batches;
  PhiloxStream rng(p.seed, b, kTagCpu);
  for (uint64_t i = first; i < last; ++i) photon(rng, row);
  row[p.shells] = double(last - first);
}

}  // namespace mc

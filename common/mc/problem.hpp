// The tiny_mc problem (Prahl): a point source of photons at the origin of an infinite,
// isotropically scattering medium. Photons fly exponential steps, deposit the absorbed
// fraction (1 - albedo) of their weight at every interaction and scatter isotropically;
// below a weight threshold a roulette keeps them with probability `roulette_survival`.
// Heat is tallied in spherical shells of `microns_per_shell`; the last shell collects
// everything beyond (shells - 1) * microns_per_shell.
//
// Distances inside the steps are in mean free paths (1 / mu_t), as in tiny_mc.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>  // params() only declared: GPU steps include this header

namespace mc {

struct Problem {
  std::string name;        // tiny | small | large | custom (--photons)
  uint64_t photons = 0;
  uint64_t seed = 1;
  double mu_a = 2.0;       // absorption coefficient, 1/cm
  double mu_s = 20.0;      // scattering coefficient, 1/cm
  int shells = 101;
  double microns_per_shell = 50.0;
  double weight_threshold = 0.001;
  double roulette_survival = 0.1;

  double mu_t() const { return mu_a + mu_s; }
  double albedo() const { return mu_s / mu_t(); }
  double shell_cm() const { return microns_per_shell * 1e-4; }
  // Shell index = distance in mean free paths times this (tiny_mc's shells_per_mfp).
  double shells_per_mfp() const { return 1.0 / (shell_cm() * mu_t()); }
  // Volume of shell i in cm^3 (tiny_mc: 4 pi dr^3 (i^2 + i + 1/3)).
  double shell_volume_cm3(int i) const;

  nlohmann::json params() const;
  std::string digest() const;  // names the exact problem (FNV-1a of its parameters)
};

// Built-in sizes (--seed picks the random streams; the physics is the same):
//   tiny  2^17 photons  (tests: well under a second on one core, yet ~10^7 interactions)
//   small 2^22 photons  (default: the single-thread CPU step in well under a minute)
//   large 2^30 photons  (the GPU scale of the published CUDA lab report)
uint64_t photons_of_size(const std::string& size);
constexpr uint64_t kMinPhotons = uint64_t(1) << 14;
constexpr uint64_t kMaxPhotons = uint64_t(1) << 34;

}  // namespace mc

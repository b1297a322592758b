// Counter-based random numbers for the simulator. Every value is a pure function of
// (seed, stream, counter): channels can be generated in parallel, in any order, on any number
// of threads, and the voltages come out the same bytes. The mixer is SplitMix64's finalizer
// (Steele, Lea & Flood 2014); a stream is a SplitMix64 sequence started at a hashed key.
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>

#include "core/portable.hpp"

namespace epic {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;

inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// What a stream is for: one purpose per value, so that no two uses share random numbers.
enum class Stream : uint64_t { station = 1, diffuse_sky = 2, channel = 3 };

class Rng {
 public:
  Rng(uint64_t seed, Stream purpose, uint64_t index = 0)
      : state_(mix64(mix64(mix64(seed + kGolden) ^ (uint64_t(purpose) * 0xd1b54a32d192ed03ull)) ^
                     (index * 0xcbf29ce484222325ull))) {}

  uint64_t bits() { return mix64(state_ += kGolden); }
  // Uniform on (0, 1]: never 0, so log() is always finite.
  double uniform() { return double((bits() >> 11) + 1) * 0x1.0p-53; }
  // Two independent standard normal deviates (Box-Muller), as one complex number.
  std::complex<double> normal_pair() {
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    const double phi = 2.0 * core::kPi * uniform();
    return {r * std::cos(phi), r * std::sin(phi)};
  }
  // A circular complex Gaussian of mean power `power` (E|z|^2 = power).
  std::complex<double> complex_normal(double power) { return normal_pair() * std::sqrt(0.5 * power); }

 private:
  uint64_t state_;
};

}  // namespace epic

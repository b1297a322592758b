// Test only: the walk in r alone of 09_radial_walk's kernel, emulated on the CPU with 00_cpu's
// photon (common/mc/cpu_photon.hpp) in every other respect. A photon is its distance r from
// the source: at each interaction the cosine mu between the new direction and the position
// vector is drawn uniform on (-1, 1), and after a step t, r'^2 = r^2 + 2 t mu r + t^2. It must
// pass validation, which proves on any machine that the reformulation keeps tiny_mc's answer
// (with 00's float variates, not 09's: see 09's README, "What the CPU proves").
// Built a second time with STEPWISE_MUTANT_MU_FORWARD, mu on (0, 1): photons never turn back,
// and validation must reject it; a third time with STEPWISE_WALK_09_ARITHMETIC, 09's variates
// and weights (below), which must pass (tests/mc/meson.build).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "mc/cpu_photon.hpp"
#include "mc/step.hpp"

namespace mc {
namespace {

constexpr size_t kBatches = 1024;

#if !defined(STEPWISE_WALK_09_ARITHMETIC)
void radial_photon(const CpuMedium& m, PhiloxStream& rng, double* heat) {
  float radius = 0.0f, radius2 = 0.0f, weight = 1.0f;
  do {
    const float xi = rng.uniform();
#if defined(STEPWISE_MUTANT_MU_FORWARD)
    const float mu = xi;
#else
    const float mu = 2.0f * xi - 1.0f;
#endif
    const float t = -std::log(rng.uniform());
    radius2 += t * (t + 2.0f * mu * radius);
    radius = std::sqrt(std::max(radius2, 0.0f));  // rounding may take r^2 a hair below 0
    absorb(m, radius, weight, heat);
  } while (survives_roulette(m, rng, weight));
}
#endif

#if defined(STEPWISE_WALK_09_ARITHMETIC)
// 09's arithmetic, written again from steps/mc/09_radial_walk/mc.cu (the functions named
// below; line numbers at the commit that added this). A copy: if 09 changes its variates or
// its weights, this keeps testing the old ones and still passes; 09's own --check on the GPU
// is what tests 09 (its README, "What the CPU proves").

float float_of_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// step_uniform (mc.cu lines 77-82): (2m + 1) 2^-22 from bits 11..31, via the float 1 + m 2^-23.
float step_uniform_09(uint32_t bits) { return std::fma(float_of_bits(0x3f800000u + (bits >> 11)), 4.0f, -4.0f + 0x1p-22f); }

// two_mu (mc.cu lines 84-90): 2 mu, mu = (2j + 1) / 2048 - 1 from bits 0..10 of the same word.
float two_mu_09(uint32_t bits) {
  return std::fma(float_of_bits(0x3f800000u + ((bits & 0x7ffu) << 12)), 4.0f, -6.0f + 0x1p-10f);
}

// scaled (mc.cu lines 14-25): w f 2^-32 rounded to nearest.
uint32_t scaled_09(uint32_t weight, uint32_t factor) { return uint32_t((uint64_t(weight) * factor + 0x80000000u) >> 32); }

// weights_of (common/mc/gpu.cuh, a CUDA header): a launched photon weighs 2^bits units.
struct Weights09 {
  uint32_t one, albedo, threshold;
  int bits;
};
Weights09 weights_09(const Problem& p) {
  const double heaviest = std::max(1.0, p.weight_threshold / p.roulette_survival);
  const int bits = 31 - int(std::ceil(std::log2(heaviest)));
  return {1u << bits, uint32_t(std::min(std::llround(std::ldexp(p.albedo(), 32)), 0xffffffffll)),
          uint32_t(std::llround(std::ldexp(p.weight_threshold, bits))), bits};
}

// One thread of 09's transport kernel (mc.cu lines 109-212) with one photon in flight instead
// of eight: its Philox4x32-7 stream (counter (draw, thread, kTagGpu, thread >> 32)), one word
// per interaction; the roulette decided by the step's own uniform and that uniform recycled
// (roulette, lines 109-122: a photon that ends launches the next at once); the flight in units
// of ln 2 / mu_t, r^2 by two FMAs, the shell as the exact floor of r k (fly_absorb, lines
// 134-143: its __fmaf_rz trick, with NaN to the last shell as there); deposits in weight units,
// exact in double. Not 09's: __log2f and sqrt.approx are std::log2 and std::sqrt here.
void batch_09(const Problem& p, const Weights09& wt, size_t b, size_t batches, double* row) {
  const uint64_t first = p.photons * b / batches, last = p.photons * (b + 1) / batches;
  const float survival = float(p.roulette_survival), inv_survival = float(1 / p.roulette_survival);
  const float inv_end = 1.0f / (1.0f - survival);
  const float shells_per_unit = -float(-M_LN2 * p.shells_per_mfp());  // -Physics::step_scale
  const double unit = std::ldexp(1.0, -wt.bits);
  const double last_shell = double(p.shells - 1);
  const Key key = philox_key(p.seed);
  long waiting = long(last - first);
  float r = 0.0f, r2 = 0.0f;
  uint32_t weight = waiting-- > 0 ? wt.one : 0u;
  uint32_t draw = 0;
  Counter words{};
  int used = 4;
  while (weight > 0u) {
    if (used == 4) {
      words = philox4x32_7({{draw++, uint32_t(b), kTagGpu, uint32_t(uint64_t(b) >> 32)}}, key);
      used = 0;
    }
    const uint32_t bits = words.c[used++];
    float xi = step_uniform_09(bits);
    if (weight < wt.threshold) {
      if (xi <= survival) {
        weight = uint32_t(std::nearbyint(float(weight) * inv_survival));
        xi = std::fmin(xi * inv_survival, 1.0f);
      } else {
        weight = waiting-- > 0 ? wt.one : 0u;
        r = r2 = 0.0f;
        xi = std::fmin((xi - survival) * inv_end, 1.0f);
      }
    }
    const float t = std::log2(xi);
    r2 = std::fma(t, std::fma(two_mu_09(bits), r, t), r2);
    r = std::sqrt(r2);
    const double at = double(r) * double(shells_per_unit);  // exact: a product of two floats
    const unsigned shell = at < last_shell ? unsigned(at) : unsigned(last_shell);
    const uint32_t kept = scaled_09(weight, wt.albedo);
    row[shell] += double(weight - kept) * unit;
    weight = kept;
  }
  row[p.shells] = double(last - first);
}
#endif

class RadialWalk final : public Step {
 public:
  void load(const Problem& p) override {
    p_ = p;
    tally_.resize(p.shells, std::min<uint64_t>(kBatches, p.photons));
  }

  void compute() override {
    std::fill(tally_.rows.begin(), tally_.rows.end(), 0.0);
    const size_t batches = tally_.batches();
#if defined(STEPWISE_WALK_09_ARITHMETIC)
    const Weights09 weights = weights_09(p_);
    for (size_t b = 0; b < batches; ++b) batch_09(p_, weights, b, batches, tally_.row(b));
#else
    const CpuMedium medium(p_);
    for (size_t b = 0; b < batches; ++b)
      simulate_batch(p_, p_.photons, b, batches, tally_.row(b),
                     [&](PhiloxStream& rng, double* heat) { radial_photon(medium, rng, heat); });
#endif
  }

  void store(Tally& tally) override { tally = tally_; }

 private:
  Problem p_;
  Tally tally_;
};

}  // namespace

StepInfo step_info() {
#if defined(STEPWISE_WALK_09_ARITHMETIC)
  return {"radial_walk_09_arithmetic", "test only: the walk in r on the CPU with 09's variates and weights", false, {}};
#else
  return {"radial_walk", "test only: the walk in r alone on the CPU", false, {}};
#endif
}

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<RadialWalk>(); }

}  // namespace mc

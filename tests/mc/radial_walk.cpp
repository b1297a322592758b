// Test only: the walk in r alone of 07_radial_walk's kernel, emulated on the CPU with 00_cpu's
// photon (common/mc/cpu_photon.hpp) in every other respect. A photon is its distance r from
// the source: at each interaction the cosine mu between the new direction and the position
// vector is drawn uniform on (-1, 1), and after a step t, r'^2 = r^2 + 2 t mu r + t^2. It must
// pass validation, which proves on any machine that the reformulation keeps tiny_mc's answer.
// Built a second time with STEPWISE_MUTANT_MU_FORWARD, mu on (0, 1): photons never turn back,
// and validation must reject it (tests/mc/meson.build).
#include <algorithm>
#include <cmath>

#include "cpu_photon.hpp"
#include "step.hpp"

namespace mc {
namespace {

constexpr size_t kBatches = 1024;

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

class RadialWalk final : public Step {
 public:
  void load(const Problem& p) override {
    p_ = p;
    tally_.resize(p.shells, std::min<uint64_t>(kBatches, p.photons));
  }

  void compute() override {
    std::fill(tally_.rows.begin(), tally_.rows.end(), 0.0);
    const CpuMedium medium(p_);
    const size_t batches = tally_.batches();
    for (size_t b = 0; b < batches; ++b)
      simulate_batch(p_, p_.photons, b, batches, tally_.row(b),
                     [&](PhiloxStream& rng, double* heat) { radial_photon(medium, rng, heat); });
  }

  void store(Tally& tally) override { tally = tally_; }

 private:
  Problem p_;
  Tally tally_;
};

}  // namespace

StepInfo step_info() { return {"radial_walk", "test only: the walk in r alone on the CPU", false, {}}; }

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<RadialWalk>(); }

}  // namespace mc

// Test only: 00_cpu with a deliberate bug, to prove that validation catches wrong physics.
//   --bug 1  the seed CUDA kernel's direction: a point "on the disk" x = 2 r sin(phi) - 1,
//            y = 2 r cos(phi) - 1 (a disk of radius 2 around (-1, -1), not the unit disk), so
//            |direction| > 1 and most directions are NaN (those photons land in the last shell,
//            as the seed's float-to-unsigned conversion put them).
//   --bug 2  a roulette that forgets to re-weight its survivors: 0.09 % of the energy lost.
//   --bug 3  05_gpu_tuned's walk in r alone, with the cosine between the new direction and
//            the position vector drawn on (0, 1) instead of (-1, 1): photons never turn back.
//   --bug 0  no bug: the walk in r alone done right, r'^2 = r^2 + 2 t mu r + t^2 with mu
//            uniform on (-1, 1). It must pass, which proves 05's reformulation on the CPU.
// tests/mc/meson.build runs 1, 2 and 3 with --check and expects exit 1, and 0 expecting 0.
#include <algorithm>
#include <cmath>

#include "philox.hpp"
#include "step.hpp"

namespace mc {
namespace {

constexpr size_t kBatches = 1024;

class Biased final : public Step {
 public:
  explicit Biased(int bug) : bug_(bug) {}
  void load(const Problem& p) override {
    p_ = p;
    tally_.resize(p.shells, std::min<uint64_t>(kBatches, p.photons));
  }

  void compute() override {
    std::fill(tally_.rows.begin(), tally_.rows.end(), 0.0);
    const size_t batches = tally_.batches();
    for (size_t b = 0; b < batches; ++b) simulate_batch(b, batches);
  }

  void store(Tally& tally) override { tally = tally_; }

 private:
  // Every batch has its own random stream, so its photons do not depend on the others.
  void simulate_batch(size_t b, size_t batches) {
    const uint64_t first = p_.photons * b / batches, last = p_.photons * (b + 1) / batches;
    PhiloxStream rng(p_.seed, b, kTagCpu);
    double* heat = tally_.row(b);
    for (uint64_t i = first; i < last; ++i) photon(rng, heat);
    heat[p_.shells] = double(last - first);
  }

  void photon(PhiloxStream& rng, double* heat) const {
    const float albedo = float(p_.albedo());
    const float shells_per_mfp = float(p_.shells_per_mfp());
    const float threshold = float(p_.weight_threshold), survival = float(p_.roulette_survival);
    const unsigned last_shell = unsigned(p_.shells - 1);
    const bool walk_in_r = bug_ == 0 || bug_ == 3;

    float x = 0.0f, y = 0.0f, z = 0.0f;  // launch at the origin, along z
    float u = 0.0f, v = 0.0f, w = 1.0f;
    float radius = 0.0f, radius2 = 0.0f;  // the walk in r: the distance from the source alone
    float weight = 1.0f;
    for (;;) {
      if (walk_in_r) {  // scatter first: the cosine between the new direction and the position
        const float xi = rng.uniform();
        const float mu = bug_ == 3 ? xi : 2.0f * xi - 1.0f;
        const float t = -std::log(rng.uniform());
        radius2 += t * (t + 2.0f * mu * radius);
        radius = std::sqrt(std::max(radius2, 0.0f));
      } else {
        const float t = -std::log(rng.uniform());  // move: an exponential step, in mean free paths
        x += t * u;
        y += t * v;
        z += t * w;
        radius = std::sqrt(x * x + y * y + z * z);
      }

      const float r = radius * shells_per_mfp;  // absorb
      const unsigned shell = r < float(last_shell) ? unsigned(r) : last_shell;
      const float kept = weight * albedo;  // deposit exactly the weight lost (exact in float),
      heat[shell] += weight - kept;         // so every photon deposits all of its weight
      weight = kept;

      if (!walk_in_r) {  // scatter: a point in the unit disk (rejection), or the seed's wrong disk
        float xi1, xi2, t;
        if (bug_ == 1) {
          const float disk_r = std::sqrt(rng.uniform()), phi = 2.0f * float(M_PI) * rng.uniform();
          xi1 = 2.0f * disk_r * std::sin(phi) - 1.0f;
          xi2 = 2.0f * disk_r * std::cos(phi) - 1.0f;
          t = xi1 * xi1 + xi2 * xi2;
        } else {
          do {
            xi1 = 2.0f * rng.uniform() - 1.0f;
            xi2 = 2.0f * rng.uniform() - 1.0f;
            t = xi1 * xi1 + xi2 * xi2;
          } while (1.0f < t || t == 0.0f);
        }
        u = 2.0f * t - 1.0f;
        v = xi1 * std::sqrt((1.0f - u * u) / t);
        w = xi2 * std::sqrt((1.0f - u * u) / t);
      }

      if (weight < threshold) {  // roulette: unbiased, the survivors carry the lost weight
        if (rng.uniform() > survival) break;
        if (bug_ != 2) weight /= survival;
      }
    }
  }

  int bug_;
  Problem p_;
  Tally tally_;
};

}  // namespace

StepInfo step_info() {
  return {"biased", "test only: a deliberately wrong sampler", false,
          {{"bug", 1, 0, 3, "1: the seed's wrong disk, 2: roulette without re-weighting, 3: the walk in r with mu on (0, 1); 0: no bug, the walk in r"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<Biased>(int(core::tunable(t, "bug"))); }

}  // namespace mc

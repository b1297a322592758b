constexpr size_t kBatches = 1024;

class Cpu final : public Step {
 public:
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

    float x = 0.0f, y = 0.0f, z = 0.0f;  // launch at the origin, along z
    float u = 0.0f, v = 0.0f, w = 1.0f;
    float weight = 1.0f;
    for (;;) {
      float t = -std::log(rng.uniform());  // move: an exponential step, in mean free paths
      x += t * u;
      y += t * v;
      z += t * w;

      const float r = std::sqrt(x * x + y * y + z * z) * shells_per_mfp;  // absorb
      const unsigned shell = r < float(last_shell) ? unsigned(r) : last_shell;
      const float kept = weight * albedo;  // deposit exactly the weight lost (exact in float),
      heat[shell] += weight - kept;         // so every photon deposits all of its weight
      weight = kept;

      float xi1, xi2;  // new direction: a point uniform in the unit disk (rejection)
      do {
        xi1 = 2.0f * rng.uniform() - 1.0f;
        xi2 = 2.0f * rng.uniform() - 1.0f;
        t = xi1 * xi1 + xi2 * xi2;
      } while (1.0f < t || t == 0.0f);
      u = 2.0f * t - 1.0f;
      v = xi1 * std::sqrt((1.0f - u * u) / t);
      w = xi2 * std::sqrt((1.0f - u * u) / t);

      if (weight < threshold) {  // roulette: unbiased, the survivors carry the lost weight
        if (rng.uniform() > survival) break;
        weight /= survival;
      }
    }
  }

  Problem p_;
  Tally tally_;
};

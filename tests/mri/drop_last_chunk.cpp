// A deliberately wrong MRI step for the test suite: it walks the samples in chunks, as the
// constant-memory steps do, but forgets the last partial chunk. On the tiny problem
// (1,024 samples, chunks of 1,000) it drops 24 samples; the harness's validation must see it
// and exit 1. A validation that let this pass would let a real chunking bug pass too.
#include <algorithm>
#include <cmath>
#include <vector>

#include "step.hpp"
#include "weights.hpp"

namespace mri {
namespace {

constexpr float kPi = 3.1415926535897932384626433832795029f;
constexpr int kChunk = 1000;

class DropLastChunk final : public Step {
 public:
  void load(const Inputs& in) override {
    in_ = in;
    rFhD_.assign(in.numX, 0.0f);
    iFhD_.assign(in.numX, 0.0f);
  }

  void compute() override {
    const Inputs& k = in_;
    const bool q = k.kernel == Kernel::q;
    std::fill(rFhD_.begin(), rFhD_.end(), 0.0f);
    std::fill(iFhD_.begin(), iFhD_.end(), 0.0f);
    // The bug: whole chunks only. The correct loop runs while first < numK.
    for (int first = 0; first + kChunk <= k.numK; first += kChunk)
      for (int m = first; m < first + kChunk; ++m) {
        float rMu, iMu;
        sample_weight(q, k.phiR[m], k.phiI[m], q ? 0.f : k.dR[m], q ? 0.f : k.dI[m], rMu, iMu);
        for (int n = 0; n < k.numX; ++n) {
          const float expFhD = 2 * kPi * (k.kx[m] * k.x[n] + k.ky[m] * k.y[n] + k.kz[m] * k.z[n]);
          rFhD_[n] += rMu * std::cos(expFhD) - iMu * std::sin(expFhD);
          iFhD_[n] += iMu * std::cos(expFhD) + rMu * std::sin(expFhD);
        }
      }
  }

  void store(float* outR, float* outI) override {
    std::copy(rFhD_.begin(), rFhD_.end(), outR);
    std::copy(iFhD_.begin(), iFhD_.end(), outI);
  }

 private:
  Inputs in_{};
  std::vector<float> rFhD_, iFhD_;
};

}  // namespace

StepInfo step_info() {
  return {"test_drop_last_chunk", "Wrong on purpose: drops the last partial chunk of samples", false,
          Accuracy::exact, {}};
}

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<DropLastChunk>(); }

}  // namespace mri

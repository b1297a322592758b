class CpuLoop final : public Step {
 public:
  void load(const Inputs& in) override {
    in_ = in;
    rFhD_.assign(in.numX, 0.0f);
    iFhD_.assign(in.numX, 0.0f);
  }

  void compute() override {
    const Inputs& k = in_;
    const bool q = k.kernel == Kernel::q;
    for (int m = 0; m < k.numK; ++m) {
      float rMu, iMu;
      sample_weight(q, k.phiR[m], k.phiI[m], q ? 0.f : k.dR[m], q ? 0.f : k.dI[m], rMu, iMu);
      for (int n = 0; n < k.numX; ++n) {
        const float expFhD = 2 * core::kPiF * (k.kx[m] * k.x[n] + k.ky[m] * k.y[n] + k.kz[m] * k.z[n]);
        const float cArg = std::cos(expFhD);
        const float sArg = std::sin(expFhD);
        rFhD_[n] += rMu * cArg - iMu * sArg;
        iFhD_[n] += iMu * cArg + rMu * sArg;
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

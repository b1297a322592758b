class CpuOmp final : public Step {
 public:
  void load(const Inputs& in) override {
    in_ = in;
    rFhD_.assign(in.numX, 0.0f);
    iFhD_.assign(in.numX, 0.0f);
    rMu_.resize(in.numK);
    iMu_.resize(in.numK);
  }

  void compute() override {
    const Inputs& k = in_;
    const bool q = k.kernel == Kernel::q;
    for (int m = 0; m < k.numK; ++m)
      sample_weight(q, k.phiR[m], k.phiI[m], q ? 0.f : k.dR[m], q ? 0.f : k.dI[m], rMu_[m], iMu_[m]);
    const float* rMu = rMu_.data();
    const float* iMu = iMu_.data();
#pragma omp parallel for schedule(static)
    for (int n = 0; n < k.numX; ++n) {
      const float x = k.x[n], y = k.y[n], z = k.z[n];
      float rFhD = 0.0f, iFhD = 0.0f;
#pragma omp simd reduction(+ : rFhD, iFhD)
      for (int m = 0; m < k.numK; ++m) {
        const float expFhD = 2 * core::kPiF * (k.kx[m] * x + k.ky[m] * y + k.kz[m] * z);
        const float cArg = std::cos(expFhD);
        const float sArg = std::sin(expFhD);
        rFhD += rMu[m] * cArg - iMu[m] * sArg;
        iFhD += iMu[m] * cArg + rMu[m] * sArg;
      }
      rFhD_[n] = rFhD;
      iFhD_[n] = iFhD;
    }
  }

  void store(float* outR, float* outI) override {
    std::copy(rFhD_.begin(), rFhD_.end(), outR);
    std::copy(iFhD_.begin(), iFhD_.end(), outI);
  }

 private:
  Inputs in_{};
  std::vector<float> rFhD_, iFhD_, rMu_, iMu_;
};

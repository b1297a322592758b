class FhDStep final : public Step {
 public:
  explicit FhDStep(int threads) : threads_(threads) {}
  void load(const Inputs& in) override { dev_.upload(in); }

  void compute() override {
    DeviceProblem& d = dev_;
    CUDA_CHECK(cudaMemsetAsync(d.rFhD.data(), 0, d.numX * sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(d.iFhD.data(), 0, d.numX * sizeof(float)));
    cmpFhD<<<blocks_for(d.numK, threads_), threads_>>>(
        d.kx.data(), d.ky.data(), d.kz.data(), d.phiR.data(), d.phiI.data(), d.dR.data(),
        d.dI.data(), d.x.data(), d.y.data(), d.z.data(), d.rFhD.data(), d.iFhD.data(), d.numK,
        d.numX, d.q());
    CUDA_CHECK_LAUNCH();
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_;
  DeviceProblem dev_;
};

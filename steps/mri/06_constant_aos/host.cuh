// Device-to-device copy of `count` samples into k_c, ordered on the default stream after the
// previous chunk's kernel (which still reads the old contents).
void to_constant(const KSample* from, int count) {
  CUDA_CHECK(cudaMemcpyToSymbolAsync(k_c, from, count * sizeof(KSample), 0, cudaMemcpyDeviceToDevice));
}

class FhDStep final : public Step {
 public:
  explicit FhDStep(int threads) : threads_(threads) {}
  void load(const Inputs& in) override {
    dev_.upload(in);
    k_.resize(in.numK);
  }

  void compute() override {
    DeviceProblem& d = dev_;
    CUDA_CHECK(cudaMemsetAsync(d.rFhD.data(), 0, d.numX * sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(d.iFhD.data(), 0, d.numX * sizeof(float)));
    cmpMu<<<blocks_for(d.numK, threads_), threads_>>>(d.kx.data(), d.ky.data(), d.kz.data(),
                                                      d.phiR.data(), d.phiI.data(), d.dR.data(),
                                                      d.dI.data(), k_.data(), d.numK, d.q());
    CUDA_CHECK_LAUNCH();
    for (int first = 0; first < d.numK; first += kChunk) {
      const int count = std::min(kChunk, d.numK - first);
      to_constant(k_.data() + first, count);
      cmpFhD<<<blocks_for(d.numX, threads_), threads_>>>(d.x.data(), d.y.data(), d.z.data(),
                                                         d.rFhD.data(), d.iFhD.data(), count,
                                                         d.numX);
      CUDA_CHECK_LAUNCH();
    }
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_;
  DeviceProblem dev_;
  DeviceArray<KSample> k_;
};

class GriddingStep final : public Step {
 public:
  GriddingStep(int threads, double tolerance) : threads_(threads), kernel_(es_kernel_for(tolerance / kMargin, kOversampling)) {}

  void load(const Inputs& in) override {
    gr_.width = kernel_.width;
    gr_.beta = float(kernel_.beta);
    grid_.prepare(in, kOversampling, [&](double nu) { return es_kernel_transform(nu, kernel_); });
    for (int a = 0; a < 3; ++a) gr_.g[a] = grid_.g(a), gr_.sigma[a] = grid_.sigma(a);
    dev_.upload(in);
  }

  void compute() override {
    float2* grid = grid_.data();
    grid_.clear();
    spread<<<blocks_for(dev_.numK, threads_), threads_>>>(dev_.kx.data(), dev_.ky.data(), dev_.kz.data(), dev_.phiR.data(),
                                                          dev_.phiI.data(), dev_.dR.data(), dev_.dI.data(), dev_.numK,
                                                          dev_.q(), gr_, grid);
    CUDA_CHECK_LAUNCH();
    grid_.transform_to_voxels(dev_.rFhD.data(), dev_.iFhD.data(), threads_);  // 2. FFT, 3. deapodize
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

  void describe(core::Fields& params) const override {
    params.set("kernel_width", kernel_.width).set("beta", kernel_.beta);
  }

 private:
  int threads_;
  EsKernel kernel_;
  Grid gr_{};
  DeviceProblem dev_;
  OversampledGrid grid_;
};

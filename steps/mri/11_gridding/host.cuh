class GriddingStep final : public Step {
 public:
  GriddingStep(int threads, int width, double oversampling) : threads_(threads), width_(width), oversampling_(oversampling) {}

  void load(const Inputs& in) override {
    gr_.width = width_;
    gr_.beta = float(kaiser_bessel_beta(width_, oversampling_));  // UsageError when W is too narrow for sigma
    grid_.prepare(in, oversampling_, [&](double nu) { return kaiser_bessel_transform(nu, width_, gr_.beta); });
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

 private:
  int threads_, width_;
  double oversampling_;
  Grid gr_{};
  DeviceProblem dev_;
  OversampledGrid grid_;
};

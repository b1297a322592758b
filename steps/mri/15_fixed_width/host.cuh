class GriddingStep final : public Step {
 public:
  GriddingStep(int threads, double tolerance, int subproblem)
      : threads_(threads), subproblem_(subproblem), kernel_(es_kernel_for(tolerance / kMargin, kOversampling)) {}

  void load(const Inputs& in) override {
    gr_.width = kernel_.width;
    gr_.beta = float(kernel_.beta);
    grid_.prepare(in, kOversampling, [&](double nu) { return es_kernel_transform(nu, kernel_); });
    for (int a = 0; a < 3; ++a) gr_.g[a] = grid_.g(a), gr_.sigma[a] = grid_.sigma(a);
    dev_.upload(in);
    make_plan();
  }

  void compute() override {
    float2* grid = grid_.data();
    grid_.clear();
    switch (gr_.width) {  // the widths --tolerance 1e-2 .. 1e-6 give
      case 4: spread<4>(grid); break;
      case 5: spread<5>(grid); break;
      case 6: spread<6>(grid); break;
      case 7: spread<7>(grid); break;
      case 8: spread<8>(grid); break;
      default: throw core::UsageError("no spread compiled for kernel width " + std::to_string(gr_.width));
    }
    grid_.transform_to_voxels(dev_.rFhD.data(), dev_.iFhD.data(), threads_);  // 2. FFT, 3. deapodize
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

  void describe(core::Fields& params) const override {
    params.set("kernel_width", kernel_.width).set("beta", kernel_.beta);
    params.set("subproblems", subproblems_.size()).set("plan_ms", plan_ms_);  // the last load()'s plan
  }

 private:
  template <int W>
  void spread(float2* grid) {
    const int side = kBin + W;
    spread_subproblems<W><<<int(subproblems_.size()), threads_, side * side * side * sizeof(float2)>>>(
        px_.data(), py_.data(), pz_.data(), order_.data(), dev_.phiR.data(), dev_.phiI.data(), dev_.dR.data(),
        dev_.dI.data(), dev_.q(), subproblems_.data(), gr_, bins_, grid);
    CUDA_CHECK_LAUNCH();
  }

  // The plan: the samples in bin order (positions and their index m) and the subproblems.
  void make_plan() {
    CUDA_CHECK(cudaDeviceSynchronize());
    const core::HostClock clock;
    const int numK = dev_.numK;
    for (int a = 0; a < 3; ++a) bins_.n[a] = (gr_.g[a] + kBin - 1) / kBin;
    const int nbins = bins_.n[0] * bins_.n[1] * bins_.n[2];
    sx_.resize(numK), sy_.resize(numK), sz_.resize(numK), bin_of_.resize(numK), rank_.resize(numK), count_.resize(nbins);
    CUDA_CHECK(cudaMemsetAsync(count_.data(), 0, nbins * sizeof(int)));
    bin_samples<<<blocks_for(numK, threads_), threads_>>>(dev_.kx.data(), dev_.ky.data(), dev_.kz.data(), numK, gr_, bins_,
                                                          sx_.data(), sy_.data(), sz_.data(), bin_of_.data(),
                                                          rank_.data(), count_.data());
    CUDA_CHECK_LAUNCH();
    // 2. Where each bin starts in bin order, and its subproblems: a few thousand bins, on the host.
    std::vector<int> counts(nbins), start(nbins);
    count_.download(counts.data());
    std::vector<int3> subproblems;
    for (int b = 0, first = 0; b < nbins; first += counts[b], ++b) {
      start[b] = first;
      for (int i = 0; i < counts[b]; i += subproblem_) subproblems.push_back({b, first + i, std::min(subproblem_, counts[b] - i)});
    }
    bin_start_.upload(start.data(), start.size());
    subproblems_.upload(subproblems.data(), subproblems.size());
    px_.resize(numK), py_.resize(numK), pz_.resize(numK), order_.resize(numK);
    place_samples<<<blocks_for(numK, threads_), threads_>>>(sx_.data(), sy_.data(), sz_.data(), bin_of_.data(),
                                                            rank_.data(), bin_start_.data(), numK, px_.data(), py_.data(),
                                                            pz_.data(), order_.data());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    plan_ms_ = clock.elapsed_ms();
  }

  int threads_, subproblem_;
  EsKernel kernel_;
  Grid gr_{};
  DeviceProblem dev_;
  OversampledGrid grid_;
  Bins bins_{};
  DeviceArray<float> px_, py_, pz_;  // sample positions in grid cells, wrapped, in bin order
  DeviceArray<int> order_;           // the sample m at each place in bin order
  DeviceArray<int3> subproblems_;    // bin, first place, samples
  DeviceArray<float> sx_, sy_, sz_;  // the plan's work: positions, bins and ranks in sample order,
  DeviceArray<int> bin_of_, rank_, count_, bin_start_;  // samples per bin and where each bin starts
  double plan_ms_ = 0;
};

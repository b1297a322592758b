class GpuTuned final : public Step {
 public:
  GpuTuned(long threads, long photons_per_thread) : threads_(int(threads)), asked_(unsigned(photons_per_thread)) {
    check_threads(threads);
  }

  void load(const Problem& p) override {
    ph_ = physics_of(p);
    weights_ = weights_of(p);
    launch_ = plan_flat_launch(p.photons, threads_, asked_);
    rows_.resize(launch_.batches * (p.shells + 1));
    shared_ = size_t(threads_ / kThreadsPerRow) * (2 * p.shells + 1) * sizeof(unsigned);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
  }

  void compute() override {
    CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<launch_.blocks, threads_, shared_>>>(ph_, weights_, launch_.photons_per_thread, unsigned(launch_.batches),
                                                     rows_.data());
    CUDA_CHECK_LAUNCH();
  }

  void store(Tally& tally) override { copy_rows(tally, ph_.shells, launch_.batches, rows_.data()); }

  void describe(core::Fields& params) const override {
    params.set("photons_per_thread_used", launch_.photons_per_thread);
    params.set("photons_in_flight", kInFlight);
    params.set("threads_per_tally_row", kThreadsPerRow);
    params.set("blocks", launch_.blocks);
  }

 private:
  int threads_;
  unsigned asked_;
  Physics ph_{};
  Weights weights_{};
  FlatLaunch launch_;
  size_t shared_ = 0;
  core::DeviceArray<unsigned long long> rows_;
};

class GpuNaive final : public Step {
 public:
  explicit GpuNaive(long threads) : threads_(int(threads)) { check_threads(threads); }

  void load(const Problem& p) override {
    ph_ = physics_of(p);
    blocks_ = (p.photons + threads_ - 1) / threads_;
    batches_ = batches_for(blocks_);
    rows_.resize(batches_ * (p.shells + 1));
  }

  void compute() override {
    CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<blocks_, threads_>>>(ph_, unsigned(batches_), rows_.data());
    CUDA_CHECK_LAUNCH();
  }

  void store(Tally& tally) override { copy_rows(tally, ph_.shells, batches_, rows_.data()); }

 private:
  int threads_;
  Physics ph_{};
  size_t blocks_ = 0, batches_ = 0;
  core::DeviceArray<unsigned long long> rows_;
};

class GpuTuned final : public Step {
 public:
  GpuTuned(long threads, long photons_per_thread) : threads_(int(threads)), asked_(unsigned(photons_per_thread)) {
    check_threads(threads);
  }

  void load(const Problem& p) override {
    ph_ = physics_of(p);
    weights_ = weights_of(p);
    launch_ = plan_flat_launch(p.photons, threads_, asked_);
    // Rank r takes blocks [r B / n, (r + 1) B / n): equal runs to a block.
    comm_ = core::world_communicator();
    const core::Ranks& world = core::ranks();
    if (launch_.blocks < size_t(world.size))
      throw core::UsageError(std::to_string(launch_.blocks) + " blocks cannot be shared by " + std::to_string(world.size) +
                             " GPUs: give more --photons or fewer GPUs");
    first_block_ = launch_.blocks * world.rank / world.size;
    my_blocks_ = launch_.blocks * (world.rank + 1) / world.size - first_block_;
    rows_.resize(launch_.batches * (p.shells + 1));
    shared_ = size_t(threads_ / kThreadsPerRow) * (2 * p.shells + 1) * sizeof(unsigned);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
  }

  void compute() override {
    CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<my_blocks_, threads_, shared_>>>(ph_, weights_, launch_.photons_per_thread, unsigned(launch_.batches),
                                                 first_block_, rows_.data());
    CUDA_CHECK_LAUNCH();
    // Every GPU's rows summed into every GPU's: integer sums, so in any order the same bits.
    NCCL_CHECK(ncclAllReduce(rows_.data(), rows_.data(), rows_.size(), ncclUint64, ncclSum, comm_, cudaStreamLegacy));
  }

  void store(Tally& tally) override { copy_rows(tally, ph_.shells, launch_.batches, rows_.data()); }

  void describe(core::Fields& params) const override {
    params.set("photons_per_thread_used", launch_.photons_per_thread);
    params.set("photons_in_flight", kInFlight);
    params.set("threads_per_tally_row", kThreadsPerRow);
    params.set("blocks", launch_.blocks);
    params.set("blocks_this_gpu", my_blocks_);
  }

 private:
  int threads_;
  unsigned asked_;
  Physics ph_{};
  Weights weights_{};
  FlatLaunch launch_;
  ncclComm_t comm_ = nullptr;
  size_t first_block_ = 0, my_blocks_ = 0;
  size_t shared_ = 0;
  core::DeviceArray<unsigned long long> rows_;
};

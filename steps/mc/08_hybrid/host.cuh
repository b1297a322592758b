class Hybrid final : public Step {
 public:
  Hybrid(long threads, long photons_per_thread, double gpu_fraction)
      : threads_(int(threads)), asked_(unsigned(photons_per_thread)), gpu_fraction_(gpu_fraction) {
    check_threads(threads);
  }

  void load(const Problem& p) override {
    p_ = p;
    ph_ = physics_of(p);
    weights_ = weights_of(p);
    ph_.photons = (unsigned long long)std::llround(gpu_fraction_ * double(p.photons));
    cpu_photons_ = p.photons - ph_.photons;
    launch_ = plan_flat_launch(ph_.photons, threads_, asked_);
    rows_.resize(std::max<size_t>(1, launch_.batches * (p.shells + 1)));
    shared_ = size_t(threads_ / kThreadsPerRow) * (2 * p.shells + 1) * sizeof(unsigned);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
    cpu_tally_.resize(p.shells, std::min<uint64_t>(1024, cpu_photons_));
  }

  void compute() override {
    if (launch_.blocks > 0) {  // asynchronous: the host goes on at once
      CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
      transport<<<launch_.blocks, threads_, shared_>>>(ph_, weights_, launch_.photons_per_thread, unsigned(launch_.batches),
                                                       rows_.data());
      CUDA_CHECK_LAUNCH();
    }
    std::fill(cpu_tally_.rows.begin(), cpu_tally_.rows.end(), 0.0);
    const CpuMedium medium(p_);
    const size_t batches = cpu_tally_.batches();
#pragma omp parallel for schedule(dynamic)
    for (size_t b = 0; b < batches; ++b)
      simulate_batch(p_, cpu_photons_, b, batches, cpu_tally_.row(b),
                     [&](PhiloxStream& rng, double* heat) { cpu_photon(medium, rng, heat); });
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  void store(Tally& tally) override {  // the exact merge: GPU rows, then CPU rows
    copy_rows(tally, ph_.shells, launch_.batches, rows_.data());
    tally.rows.insert(tally.rows.end(), cpu_tally_.rows.begin(), cpu_tally_.rows.end());
  }

  void describe(core::Fields& params) const override {
    params.set("photons_per_thread_used", launch_.photons_per_thread);
    params.set("photons_in_flight", kInFlight);
    params.set("threads_per_tally_row", kThreadsPerRow);
    params.set("blocks", launch_.blocks);
    params.set("gpu_photons", ph_.photons);
    params.set("cpu_photons", cpu_photons_);
    params.set("cpu_threads", omp_get_max_threads());
  }

 private:
  int threads_;
  unsigned asked_;
  double gpu_fraction_;
  Problem p_;
  Physics ph_{};
  Weights weights_{};
  uint64_t cpu_photons_ = 0;
  FlatLaunch launch_;
  size_t shared_ = 0;
  core::DeviceArray<unsigned long long> rows_;
  Tally cpu_tally_;
};

class GpuPipeline final : public GpuStep {
 public:
  GpuPipeline(long batch, long threads) : batch_limit_(int(batch)), threads_(int(threads)) {}

  void load(const Inputs& in) override {
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    // The batch: the memo transforms a whole gulp at once; the limit keeps the grids within
    // memory.
    batch_ = std::min(batch_limit_, in.samples_per_gulp);
    const size_t nn = size_t(in.image_size) * in.image_size;
    const size_t bytes_per_sample = size_t(in.channels) * in.stands * in.pols;
    const size_t need = batch_ * (bytes_per_sample + size_t(in.channels) * in.pols * nn * sizeof(cufftComplex));
    if (grids_.size() != size_t(batch_) * in.channels * in.pols * nn) {  // before allocating: will it fit?
      grids_.resize(0);
      require_device_memory(need, "--batch " + std::to_string(batch_) + " (grids)", "use a smaller --batch");
    }
    pinned_.load(in);  // the F-engine's bytes in pinned memory, copied once
    volts_.resize(size_t(batch_) * bytes_per_sample);
    grids_.resize(size_t(batch_) * in.channels * in.pols * nn);
    upload_cell_lists(in);
  }

  void compute() override {
    timer_.reset();
    const size_t nn = size_t(in_.image_size) * in_.image_size;
    const size_t bytes_per_sample = size_t(in_.channels) * in_.stands * in_.pols;
    const ProductList pl = product_list(in_);
    for (int g = 0; g < in_.gulps; ++g)
      for (int t0 = 0; t0 < in_.samples_per_gulp; t0 += batch_) {
        const int b = std::min(batch_, in_.samples_per_gulp - t0);
        const size_t first = size_t(g) * in_.samples_per_gulp + t0;
        const bool assign = first == 0;  // the first batch starts every sum: no memset
        timer_.begin("copy");
        CUDA_CHECK(cudaMemcpyAsync(volts_.data(), pinned_.data() + first * bytes_per_sample, b * bytes_per_sample,
                                   cudaMemcpyHostToDevice));
        timer_.end();
        timer_.begin("grid");
        grid_cells<<<blocks(size_t(b) * in_.channels * in_.pols * nn, threads_), threads_>>>(
            s_, b, volts_.data(), cell_start_.data(), cell_stand_.data(), cell_weight_.data(), grids_.data());
        CUDA_CHECK_LAUNCH();
        if (in_.remove_autos) {
          accumulate_autos<<<blocks(size_t(in_.channels) * in_.stands, threads_), threads_>>>(s_, b, assign, volts_.data(), autos_.data());
          CUDA_CHECK_LAUNCH();
        }
        timer_.end();
        timer_.begin("fft");
        ffts_.inverse(grids_.data(), in_.image_size, 1LL * b * in_.channels * in_.pols);
        timer_.end();
        timer_.begin("multiply");
        multiply_accumulate<<<blocks(size_t(in_.channels) * nn, threads_), threads_>>>(s_, b, pl, assign, grids_.data(),
                                                                                     image_.data());
        CUDA_CHECK_LAUNCH();
        timer_.end();
      }
    finish(pl, threads_);
  }

  void describe(core::Fields& params) const override {
    params.set("batch", batch_);
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  void upload_cell_lists(const Inputs& in) {
    const CellLists l = make_cell_lists(in);
    cell_start_.upload(l.start.data(), l.start.size());
    cell_stand_.upload(l.stand.data(), l.stand.size());
    cell_weight_.upload(l.weight.data(), l.weight.size());
  }

  int batch_limit_, threads_;
  int batch_ = 0;
  PinnedVoltages pinned_;
  core::DeviceArray<uint8_t> volts_;
  core::DeviceArray<cufftComplex> grids_;
  core::DeviceArray<float> cell_weight_;
  core::DeviceArray<int32_t> cell_start_, cell_stand_;
  GridFfts ffts_;  // a plan for a gulp's batches and one for its remainder
};

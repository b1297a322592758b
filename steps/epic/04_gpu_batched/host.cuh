class GpuBatched final : public GpuStep {
 public:
  explicit GpuBatched(long threads) : threads_(int(threads)) {}

  void load(const Inputs& in) override {
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    const size_t nn = size_t(in.image_size) * in.image_size;
    const long long transforms = 1LL * in.samples_per_gulp * in.channels * in.pols;
    if (grids_.size() != size_t(transforms) * nn) {  // one plan for the whole gulp: will its grids fit?
      grids_.resize(0);
      const size_t need =
          transforms * nn * sizeof(cufftComplex) + GridFfts::work_bytes(in.image_size, transforms) + 2 * gulp_bytes(in);
      require_device_memory(need, "a gulp of " + std::to_string(in.samples_per_gulp) + " samples (grids, FFT work area, voltages)",
                            "use fewer --samples or --channels");
    }
    gulps_.load(in);  // pinned host copy, two device buffers of a gulp
    grids_.resize(size_t(transforms) * nn);
    upload_cell_lists(in);
  }

  void compute() override {
    timer_.reset();
    const size_t nn = size_t(in_.image_size) * in_.image_size;
    const ProductList pl = product_list(in_);
    const int samples = in_.samples_per_gulp;
    gulps_.copy(0, timer_);
    for (int g = 0; g < in_.gulps; ++g) {
      if (g + 1 < in_.gulps) gulps_.copy(g + 1, timer_);  // overlaps this gulp's work
      const uint8_t* volts = gulps_.wait(g);
      timer_.begin("grid");
      grid_cells<<<blocks(size_t(samples) * in_.channels * in_.pols * nn, threads_), threads_>>>(
          s_, samples, volts, cell_start_.data(), cell_stand_.data(), cell_weight_.data(), grids_.data());
      CUDA_CHECK_LAUNCH();
      if (in_.remove_autos) {
        accumulate_autos<<<blocks(size_t(in_.channels) * in_.stands, threads_), threads_>>>(s_, samples, g == 0, volts,
                                                                                           autos_.data());
        CUDA_CHECK_LAUNCH();
      }
      gulps_.consumed(g);  // the grid kernel (and autos) have read gulp g's buffer
      timer_.end();
      timer_.begin("fft");
      ffts_.inverse(grids_.data(), in_.image_size, 1LL * samples * in_.channels * in_.pols);
      timer_.end();
      timer_.begin("multiply");
      multiply_accumulate<<<blocks(size_t(in_.channels) * nn, threads_), threads_>>>(s_, samples, pl, g == 0, grids_.data(),
                                                                                     image_.data());
      CUDA_CHECK_LAUNCH();
      timer_.end();
    }
    finish(pl, threads_);
  }

  void describe(core::Fields& params) const override {
    params.set("batch", in_.samples_per_gulp);  // one plan per gulp
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  void upload_cell_lists(const Inputs& in) {
    const CellLists l = make_cell_lists(in);
    cell_start_.upload(l.start.data(), l.start.size());
    cell_stand_.upload(l.stand.data(), l.stand.size());
    cell_weight_.upload(l.weight.data(), l.weight.size());
  }

  int threads_;
  GridFfts ffts_;  // one plan: every grid of a gulp
  GulpStream gulps_;  // gulp g + 1's copy beside gulp g's kernels
  core::DeviceArray<cufftComplex> grids_;
  core::DeviceArray<float> cell_weight_;
  core::DeviceArray<int32_t> cell_start_, cell_stand_;
};

class TensorDft final : public GpuStep {
 public:
  explicit TensorDft(long slices) : slices_(int(slices)) {}

  void load(const Inputs& in) override {
    if (in.image_size != kN)
      throw core::UsageError("this step images " + std::to_string(kN) + " x " + std::to_string(kN) + " (--image-size " +
                             std::to_string(in.image_size) + " is 10_cluster_128's)");
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    gulps_.load(in);  // pinned host copy, two device buffers of a gulp
    if (in.stands > kThreads)
      throw core::UsageError("this step decodes a stand a thread, at most " + std::to_string(kThreads) + " stands; " +
                             std::to_string(in.stands) + " is more");
    const DftPlan plan = dft_plan(in);
    chunks_.upload(plan.chunks.data(), plan.chunks.size());
    entries_.upload(plan.entry.data(), plan.entry.size());
    item_first_.upload(plan.first.data(), plan.first.size());
    item_ends_.upload(plan.ends.data(), plan.ends.size());
    column_dft_.upload(plan.column_dft.data(), plan.column_dft.size());
    row_dft_.upload(plan.row_dft.data(), plan.row_dft.size());
    rows_max_ = plan.rows_max, columns_max_ = plan.columns_max;
    // Up to 32 occupied rows and columns (LWA-SV at 38-41 MHz, support 2) the kernel built for
    // 4 chunks of each; beyond, the one built for 8 (more registers for the matrices' fragments).
    wide_ = rows_max_ > 32 || columns_max_ > 32;
    const int rc = wide_ ? 8 : 4, cc = rc;
    smem_ = size_t(2) * 4 * 2 * cc * 32 * sizeof(uint4) + size_t(2) * 2 * cc * rc * 32 * sizeof(uint2) +
            size_t(2) * in.stands * sizeof(float4);
    int device = 0, sms = 0, per_sm = 0, most = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (smem_ > size_t(most))
      throw core::UsageError("this step needs " + std::to_string(smem_) + " bytes of shared memory a block; this GPU gives a block at most " +
                             std::to_string(most));
    const void* kernel = wide_ ? (const void*)image_samples<8, 8> : (const void*)image_samples<4, 4>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    // Slices per channel: enough blocks for every SM to hold as many as it can at once.
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem_));
    blocks_per_sm_ = per_sm;
    slices_used_ = slices_ > 0 ? slices_ : (sms * std::max(per_sm, 1) + in.channels - 1) / in.channels;
    slices_used_ = std::min(slices_used_, in.samples_per_gulp);
  }

  void compute() override {
    timer_.reset();
    const ProductList pl = product_list(in_);
    const int samples = in_.samples_per_gulp, per_slice = (samples + slices_used_ - 1) / slices_used_;
    const dim3 grid(unsigned(in_.channels), unsigned((samples + per_slice - 1) / per_slice));
    CUDA_CHECK(cudaMemsetAsync(image_.data(), 0, image_.size() * sizeof(float)));  // 13 MB, once a run
    gulps_.copy(0, timer_);
    for (int g = 0; g < in_.gulps; ++g) {
      if (g + 1 < in_.gulps) gulps_.copy(g + 1, timer_);  // overlaps this gulp's work
      const uint8_t* volts = gulps_.wait(g);
      timer_.begin("image");
      wide_ ? launch<8, 8>(grid, samples, per_slice, pl, volts) : launch<4, 4>(grid, samples, per_slice, pl, volts);
      CUDA_CHECK_LAUNCH();
      timer_.end();
      if (in_.remove_autos) {
        timer_.begin("autos");
        accumulate_autos<<<blocks(size_t(in_.channels) * in_.stands, 256), 256>>>(s_, samples, g == 0, volts, autos_.data());
        CUDA_CHECK_LAUNCH();
        timer_.end();
      }
      gulps_.consumed(g);  // the image and autos kernels have read gulp g's buffer
    }
    finish(pl, 256);
  }

  void describe(core::Fields& params) const override {
    params.set("slices", slices_used_);  // blocks per channel
    params.set("threads", kThreads);
    params.set("blocks_per_sm", blocks_per_sm_);
    params.set("shared_bytes", smem_);
    params.set("occupied_rows_max", rows_max_);        // of kN, in the busiest channel
    params.set("occupied_columns_max", columns_max_);
    params.set("chunks_built_for", wide_ ? 8 : 4);     // the kernel's row and column chunks of 8
    params.set("mma", "m16n8k16.f32.f16.f16.f32");
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  template <int kRC, int kCC>
  void launch(dim3 grid, int samples, int per_slice, const ProductList& pl, const uint8_t* volts) {
    image_samples<kRC, kCC><<<grid, kThreads, smem_>>>(s_, samples, per_slice, pl, volts, chunks_.data(), entries_.data(),
                                                       item_first_.data(), item_ends_.data(), column_dft_.data(),
                                                       row_dft_.data(), image_.data());
  }

  int slices_, slices_used_ = 1, blocks_per_sm_ = 0, rows_max_ = 0, columns_max_ = 0;
  bool wide_ = false;
  size_t smem_ = 0;
  GulpStream gulps_;  // 04's: gulp g + 1's copy beside gulp g's kernels
  core::DeviceArray<int2> chunks_, entries_;
  core::DeviceArray<int32_t> item_first_;
  core::DeviceArray<uint32_t> item_ends_;
  core::DeviceArray<uint4> column_dft_;
  core::DeviceArray<uint2> row_dft_;
};

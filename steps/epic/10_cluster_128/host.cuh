class Cluster final : public GpuStep {
 public:
  explicit Cluster(long slices) : slices_(int(slices)) {}

  void load(const Inputs& in) override {
    if (in.image_size != kN)
      throw core::UsageError("this step images " + std::to_string(kN) + " x " + std::to_string(kN) + " (--image-size " +
                             std::to_string(in.image_size) + " is 05_fused's to 09_fused_half's)");
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    gulps_.load(in);  // pinned host copy, two device buffers of a gulp
    if (in.stands * in.pols > kMaxBytes)
      throw core::UsageError("this step stages at most " + std::to_string(kMaxBytes) + " voltage bytes a sample (stands x pols); " +
                             std::to_string(in.stands) + " stands x " + std::to_string(in.pols) + " pols is more");
    const CellLists lists = make_cell_lists(in);  // 02's lists, one (stand, weight) entry in 8 bytes
    const std::vector<int2> entry = packed_entries(lists);
    cell_start_.upload(lists.start.data(), lists.start.size());
    cell_entry_.upload(entry.data(), entry.size());

    float2 twiddle[kN];
    for (int m = 0; m < kN; ++m) {
      const double phase = 2 * M_PI * m / kN;
      twiddle[m] = make_float2(float(std::cos(phase)), float(std::sin(phase)));
    }
    CUDA_CHECK(cudaMemcpyToSymbol(c_twiddle, twiddle, sizeof(twiddle)));

    // Shared memory per block, both polarizations always (with one, Y stays zero): T, A, B and
    // two samples' bytes, 201,216 bytes: one block per SM, four SMs per image.
    smem_ = 2 * size_t(kT + kA + kB) * sizeof(float2) + 2 * kMaxBytes;
    const void* kernel = (const void*)image_samples;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    // Slices per channel: enough clusters for every SM to hold as many blocks as it can.
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem_));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(kCluster * unsigned(in.channels), 1, 1);
    config.blockDim = dim3(kThreads, 1, 1);
    config.dynamicSmemBytes = smem_;
    cudaLaunchAttribute cluster_dims;
    cluster_dims.id = cudaLaunchAttributeClusterDimension;
    cluster_dims.val.clusterDim.x = kCluster, cluster_dims.val.clusterDim.y = 1, cluster_dims.val.clusterDim.z = 1;
    config.attrs = &cluster_dims;
    config.numAttrs = 1;
    int clusters = 0;  // clusters of four such blocks the GPU can hold at once
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    if (clusters < 1) throw core::RuntimeError("this GPU cannot hold a cluster of four blocks of " +
                                               std::to_string(smem_) + " bytes of shared memory");
    clusters_ = clusters;
    slices_used_ = slices_ > 0 ? slices_ : (clusters + in.channels - 1) / in.channels;
    blocks_per_sm_ = per_sm;
    slices_used_ = std::min(slices_used_, in.samples_per_gulp);
  }

  void compute() override {
    timer_.reset();
    const ProductList pl = product_list(in_);
    const int samples = in_.samples_per_gulp, per_slice = (samples + slices_used_ - 1) / slices_used_;
    const dim3 grid(kCluster * unsigned(in_.channels), unsigned((samples + per_slice - 1) / per_slice));
    CUDA_CHECK(cudaMemsetAsync(image_.data(), 0, image_.size() * sizeof(float)));  // 13 MB, once a run
    gulps_.copy(0, timer_);
    for (int g = 0; g < in_.gulps; ++g) {
      if (g + 1 < in_.gulps) gulps_.copy(g + 1, timer_);  // overlaps this gulp's work
      const uint8_t* volts = gulps_.wait(g);
      timer_.begin("image");
      image_samples<<<grid, kThreads, smem_>>>(s_, samples, per_slice, pl, volts, cell_start_.data(), cell_entry_.data(),
                                               image_.data());
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
    params.set("cluster", kCluster);
    params.set("clusters_resident", clusters_);
    params.set("shared_bytes", smem_);
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  int slices_, slices_used_ = 1, blocks_per_sm_ = 0, clusters_ = 0;
  size_t smem_ = 0;
  GulpStream gulps_;  // 04's: gulp g + 1's copy beside gulp g's kernels
  core::DeviceArray<int32_t> cell_start_;
  core::DeviceArray<int2> cell_entry_;
};

// Rank r's share of a band of C channels: a contiguous group, C / R channels and one more for
// each of the first C % R ranks (132 channels on 8 GPUs: 17, 17, 17, 17, 16, 16, 16, 16).
struct Group {
  int first, count;
};
Group group_of(int rank, int ranks, int channels) {
  const int each = channels / ranks, extra = channels % ranks;
  return {rank * each + std::min(rank, extra), each + (rank < extra ? 1 : 0)};
}

class Fused final : public GpuStep {
 public:
  Fused(long slices, long min_blocks) : slices_(int(slices)), min_blocks_(int(min_blocks)) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&gather_stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&imaged_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&gathered_, cudaEventDisableTiming));
  }
  Fused(const Fused&) = delete;
  Fused& operator=(const Fused&) = delete;
  ~Fused() override {
    cudaEventDestroy(imaged_);
    cudaEventDestroy(gathered_);
    cudaStreamDestroy(gather_stream_);
  }

  void load(const Inputs& band) override {
    const core::Ranks& world = core::ranks();
    if (world.size > band.channels)
      throw core::UsageError("" + std::to_string(world.size) + " ranks for " + std::to_string(band.channels) +
                             " channels: each GPU images at least one (--channels " + std::to_string(world.size) +
                             " or more, or fewer ranks)");
    band_channels_ = band.channels;
    group_ = group_of(world.rank, world.size, band.channels);
    const Inputs& in = channel_group_.select(band, group_.first, group_.count);  // what the F-engine sends this GPU
    if (in.image_size != kN)
      throw core::UsageError("this step images " + std::to_string(kN) + " x " + std::to_string(kN) + " (--image-size " +
                             std::to_string(in.image_size) + " is 10_cluster_128's)");
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    gulps_.load(in);  // pinned host copy, two device buffers of a gulp
    if (in.stands > kThreads)
      throw core::UsageError("this step decodes a stand a thread, at most " + std::to_string(kThreads) + " stands; " +
                             std::to_string(in.stands) + " is more");
    const ColumnLists lists = column_lists(in);  // 02's lists, a thread's run after another's
    column_order_.upload(lists.column.data(), lists.column.size());
    occupied_.upload(lists.occupied.data(), lists.occupied.size());
    entries_.upload(lists.entry.data(), lists.entry.size());
    entry_first_.upload(lists.first.data(), lists.first.size());
    entry_ends_.upload(lists.ends.data(), lists.ends.size());
    occupied_max_ = *std::max_element(lists.occupied.begin(), lists.occupied.end());

    Twiddle twiddles[kN];
    for (int m = 0; m < kN; ++m) {
      const double phase = 2 * M_PI * m / kN;
      twiddles[m] = {__float2half2_rn(float(std::cos(phase))), __float2half2_rn(float(std::sin(phase)))};
    }
    CUDA_CHECK(cudaMemcpyToSymbol(c_twiddle, twiddles, sizeof(twiddles)));

    // Shared memory per block: two samples' padded grids of pairs, A (a column per item of the
    // busiest channel: 56 for LWA-SV at 38 MHz), and two trips' decoded fields (111,616 bytes
    // with 28 occupied columns and 256 stands; at most 164 KB, 64 columns and 512 stands).
    int device = 0, sms = 0, per_sm = 0, most = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    a_row_ = 2 * occupied_max_;
    smem_ = (2 * size_t(kN) * kRow + size_t(kN) * a_row_) * sizeof(Pair) + 4 * size_t(in.stands) * sizeof(float4);
    if (smem_ > size_t(most))
      throw core::UsageError("this step needs " + std::to_string(smem_) + " bytes of shared memory a block for " +
                             std::to_string(occupied_max_) + " occupied columns and " + std::to_string(in.stands) +
                             " stands; this GPU gives a block at most " + std::to_string(most));
    const void* kernel = min_blocks_ > 1 ? (const void*)image_samples<2> : (const void*)image_samples<1>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    // Slices per channel: enough blocks for every SM to hold as many as it can at once.
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem_));
    blocks_per_sm_ = per_sm;
    slices_used_ = slices_ > 0 ? slices_ : (sms * std::max(per_sm, 1) + in.channels - 1) / in.channels;
    slices_used_ = std::min(slices_used_, in.samples_per_gulp);

    whole_.resize(band.image_values());  // the band's image, every rank's after the gather
    comm_ = core::world_communicator();   // the first call waits for every rank
    // The ranks leave load() together, so that each run's clock starts on every GPU at once:
    // rank 0's time is then the band's, not also the wait for a rank that started late.
    const int32_t one = 1;
    ready_.upload(&one, 1);
    NCCL_CHECK(ncclAllReduce(ready_.data(), ready_.data(), 1, ncclInt32, ncclSum, comm_, gather_stream_));
    CUDA_CHECK(cudaStreamSynchronize(gather_stream_));
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
      min_blocks_ > 1 ? launch<2>(grid, samples, per_slice, pl, volts) : launch<1>(grid, samples, per_slice, pl, volts);
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
    gather();
  }

  void store(float* image) override {
    whole_.download(image);
    keep_phases();
  }

  void describe(core::Fields& params) const override {
    params.set("slices", slices_used_);  // blocks per channel
    params.set("group_channels", group_.count);  // rank 0's group: the most channels a GPU images
    params.set("threads", kThreads);
    params.set("blocks_per_sm", blocks_per_sm_);
    params.set("shared_bytes", smem_);
    params.set("samples_per_trip", 2);
    params.set("occupied_columns_max", occupied_max_);  // of kN, in the busiest channel
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  template <int kMinBlocks>
  void launch(dim3 grid, int samples, int per_slice, const ProductList& pl, const uint8_t* volts) {
    image_samples<kMinBlocks><<<grid, kThreads, smem_>>>(s_, samples, per_slice, pl, volts, column_order_.data(), occupied_.data(),
                                                        entries_.data(), entry_first_.data(), entry_ends_.data(), a_row_,
                                                        image_.data());
  }

  // The group's finished image (image_, its planes of group_.count channels) into every
  // rank's image of the band (whole_, (plane, channel, m, l)). In each plane, rank r's channels
  // are one contiguous run from channel group_of(r).first: rank r broadcasts it, and all the
  // broadcasts go in one NCCL group. (ncclAllGather puts equal counts at offsets in rank order:
  // a plane's groups only where R divides C.) On a stream of its own, ordered by events.
  void gather() {
    const core::Ranks& world = core::ranks();
    const size_t nn = size_t(kN) * kN;
    CUDA_CHECK(cudaEventRecord(imaged_));  // after finish, on the default stream
    CUDA_CHECK(cudaStreamWaitEvent(gather_stream_, imaged_, 0));
    timer_.begin("gather", gather_stream_);
    NCCL_CHECK(ncclGroupStart());
    for (int q = 0; q < in_.planes; ++q)
      for (int r = 0; r < world.size; ++r) {
        const Group g = group_of(r, world.size, band_channels_);
        float* to = whole_.data() + (size_t(q) * band_channels_ + size_t(g.first)) * nn;
        const float* from = r == world.rank ? image_.data() + size_t(q) * size_t(g.count) * nn : to;
        NCCL_CHECK(ncclBroadcast(from, to, size_t(g.count) * nn, ncclFloat32, r, comm_, gather_stream_));
      }
    NCCL_CHECK(ncclGroupEnd());
    timer_.end();
    CUDA_CHECK(cudaEventRecord(gathered_, gather_stream_));
    CUDA_CHECK(cudaStreamWaitEvent(nullptr, gathered_, 0));  // the harness's clock stops after it
  }

  int slices_, min_blocks_, slices_used_ = 1, blocks_per_sm_ = 0, occupied_max_ = 0, a_row_ = 0;
  size_t smem_ = 0;
  int band_channels_ = 0;
  Group group_{0, 0};          // this rank's channels
  ChannelGroup channel_group_;  // their inputs: the plan's, the weights' and the voltages' share
  ncclComm_t comm_ = nullptr;
  cudaStream_t gather_stream_{};
  cudaEvent_t imaged_{}, gathered_{};
  core::DeviceArray<float> whole_;
  core::DeviceArray<int32_t> ready_;
  GulpStream gulps_;  // 04's: gulp g + 1's copy beside gulp g's kernels
  core::DeviceArray<int32_t> column_order_, occupied_, entry_first_;
  core::DeviceArray<int2> entries_;
  core::DeviceArray<uint4> entry_ends_;
};

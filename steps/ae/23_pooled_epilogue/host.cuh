// Which tiles a product uses (--tiles): 0 by the size of the product, 1 always SmallTile,
// 2 always BigTile (NarrowTile for at most 8 columns in every case).
enum TileChoice { kTilesAuto = 0, kTilesSmall = 1, kTilesBig = 2 };
enum class TileKind { big, small, narrow };
const char* tile_name(TileKind k) { return k == TileKind::big ? "128x128" : k == TileKind::small ? "64x64" : "128x8"; }

// The training step of every GPU step (common/ae/gpu_training.cuh) with these kernels and
// NhwcLayers' other layers (common/ae/elementwise_nhwc.cuh). SGD updates
// the float master weights in the reference layout; the products read the rounded copies
// arrange_weights makes. O: the tensor cores' operands (--precision); everything else is the
// same for both.
template <Operands O>
class ImplicitGemm final : public NhwcLayers {
 public:
  ImplicitGemm(int threads, int tiles) : NhwcLayers(threads), tiles_(tiles) {}

  std::optional<Accuracy> accuracy() const override { return O == Operands::bf16 ? Accuracy::bf16 : Accuracy::tf32; }

  void describe(core::Fields& params) const override {
    LayeredTraining::describe(params);
    params.set("tiles", tiles_);
    if (!p_) return;
    // What the choice makes of the problem's minibatch (the timed run's; validation loads the
    // step again with smaller ones): the tiles of each product, and the weight gradient's splits.
    for (int l = 0; l < kConv5; ++l) {
      const WeightPlan plan = weight_plan(l, p_->batch);
      params.append("gemm")
          .set("forward", tile_name(conv_tile(p_->batch, L_[l], out_ch_[l])))
          .set("input_gradient", l ? tile_name(conv_tile(p_->batch, L_[l], in_ch_[l])) : "none")
          .set("weight_gradient", tile_name(plan.kind))
          .set("splits", plan.splits)
          .set("pooled_epilogue", l < kPooled && pooled_tile(p_->batch, l));
    }
    params.append("gemm")
        .set("forward", "direct")
        .set("input_gradient", "direct")
        .set("weight_gradient", "direct")
        .set("splits", conv5_splits(p_->batch));
  }

 private:
  void allocate_more(int batch) override {
    if (!configured_) configure_kernels();
    // The arranged weights: each layer's two orders at 16-byte aligned offsets, zero padding.
    size_t arranged = 0;
    for (int l = 0; l < kLayers; ++l) {
      arranged_at_[l] = arranged;
      arranged += size_t(out_ch_[l]) * 9 * in_ch_[l];
    }
    forward_weights_.resize(arranged);
    backward_weights_.resize(arranged);
    CUDA_CHECK(cudaMemset(forward_weights_.data(), 0, arranged * sizeof(float)));
    CUDA_CHECK(cudaMemset(backward_weights_.data(), 0, arranged * sizeof(float)));
    // The weight gradients' splits, and room for their partial sums (and the loss's before them).
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
    size_t partials = loss_partials(batch);
    for (int l = 0; l < kConv5; ++l) {
      const WeightPlan plan = weight_plan(l, batch);
      weight_tile_[l] = plan.kind;
      splits_[l] = plan.splits;
      partials = std::max(partials, size_t(splits_[l]) * (size_t(9) * in_ch_[l] * out_ch_[l] + out_ch_[l]));
    }
    // conv5: its direct kernels' shape, the gradient of a4 they write (u4 and its gradient are
    // never made), and its weight gradient's splits.
    const Conv& c5 = L_[kConv5];
    if (c5.out != kOut5 || out_ch_[kConv5] != 4 || in_ch_[kConv5] > kThreads5 || in_ch_[kConv5] != out_ch_[kConv5 - 1] ||
        c5.height != 2 * L_[kConv5 - 1].height || c5.width != 2 * L_[kConv5 - 1].width)
      throw core::UsageError("conv5's direct kernels want 3 outputs, at most 256 inputs, after x2 upsampling");
    d_a4_.resize(size_t(batch) * L_[kConv5 - 1].pixels() * out_ch_[kConv5 - 1]);
    // The winners of a forward pass of capacity_ images (training's minibatch, or reconstruct()'s).
    for (int l = 0; l < kPooled; ++l) winners_[l].resize(size_t(capacity_) * L_[l].pixels() / 4 * out_ch_[l]);
    partials = std::max(partials, size_t(conv5_splits(batch)) * (size_t(kTaps5) * c5.in + kOut5));
    partials_.resize(partials);
  }

  static constexpr int kConv5 = kLayers - 1;  // conv5's index

  Conv5Shape conv5_shape(int n) const {
    const Conv& c4 = L_[kConv5 - 1];
    Conv5Shape s{n, c4.height, c4.width, in_ch_[kConv5], L_[kConv5].in, 1};
    while (s.band < 8 && s.h % (2 * s.band) == 0 && 2 * s.band * s.w <= 1024) s.band *= 2;
    return s;
  }
  // Blocks of conv5_backward: one wave (a row of a4 at least each).
  int conv5_splits(int batch) const {
    return int(std::min(long(batch) * L_[kConv5 - 1].height, long(conv5_resident_) * sms_));
  }

  // The GEMM kernels may stage more than the 48 KB of shared memory a block gets without asking.
  void configure_kernels() {
    const auto allow = [](const void* kernel, size_t bytes) {
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    };
    allow(reinterpret_cast<const void*>(conv_gemm<BigTile, O>), conv_shared_bytes<BigTile>());
    allow(reinterpret_cast<const void*>(conv_gemm<SmallTile, O>), conv_shared_bytes<SmallTile>());
    allow(reinterpret_cast<const void*>(conv_gemm<NarrowTile, O>), conv_shared_bytes<NarrowTile>());
    allow(reinterpret_cast<const void*>(weight_gemm<BigTile, O>), weight_shared_bytes<BigTile>());
    allow(reinterpret_cast<const void*>(weight_gemm<SmallTile, O>), weight_shared_bytes<SmallTile>());
    allow(reinterpret_cast<const void*>(weight_gemm<NarrowTile, O>), weight_shared_bytes<NarrowTile>());
    // How many blocks of each split kernel an SM holds at once (registers, shared memory and
    // threads, as the compiled kernels need them): a wave is that times the SMs.
    const auto resident = [](const void* kernel, int threads, size_t bytes) {
      int blocks = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, bytes));
      return std::max(blocks, 1);
    };
    weight_resident_[int(TileKind::big)] = resident(reinterpret_cast<const void*>(weight_gemm<BigTile, O>),
                                                    BigTile::kThreads, weight_shared_bytes<BigTile>());
    weight_resident_[int(TileKind::small)] = resident(reinterpret_cast<const void*>(weight_gemm<SmallTile, O>),
                                                      SmallTile::kThreads, weight_shared_bytes<SmallTile>());
    weight_resident_[int(TileKind::narrow)] = resident(reinterpret_cast<const void*>(weight_gemm<NarrowTile, O>),
                                                       NarrowTile::kThreads, weight_shared_bytes<NarrowTile>());
    conv5_resident_ = resident(reinterpret_cast<const void*>(conv5_backward), kThreads5,
                               size_t(L_[kConv5 - 1].width) * kRow5 * sizeof(float));
    configured_ = true;
  }

  // The forward and input-gradient products: pixels x `columns` channels. Big tiles when they
  // alone fill the GPU at two blocks per SM (7/8 of a wave or more); small ones otherwise, four
  // times as many blocks.
  TileKind conv_tile(int n, const Conv& c, int columns) const {
    if (columns <= 8) return TileKind::narrow;
    if (tiles_ != kTilesAuto) return tiles_ == kTilesBig ? TileKind::big : TileKind::small;
    const long blocks = long(ceil_div(int(n * c.pixels()), BigTile::kM)) * ceil_div(columns, BigTile::kN);
    return blocks * 8 >= 7L * 2 * sms_ ? TileKind::big : TileKind::small;
  }

  void convolve(int n, const Conv& c, int in_ch, int out_ch, const float* in, const float* weight, const float* bias,
                int biased, bool relu, float* out, float* pooled = nullptr, unsigned char* winners = nullptr) {
    const ConvShape s{n, c.height, c.width, in_ch, out_ch, biased, relu, pooled, winners};
    const int M = n * int(c.pixels());
    switch (conv_tile(n, c, out_ch)) {
      case TileKind::big:
        return launch_conv<BigTile>(M, s, in, weight, bias, out);
      case TileKind::small:
        return launch_conv<SmallTile>(M, s, in, weight, bias, out);
      case TileKind::narrow:
        return launch_conv<NarrowTile>(M, s, in, weight, bias, out);
    }
  }
  template <class T>
  void launch_conv(int M, const ConvShape& s, const float* in, const float* weight, const float* bias, float* out) {
    const dim3 grid(unsigned(ceil_div(M, T::kM)), unsigned(ceil_div(s.out_ch, T::kN)));
    launch_grid(conv_gemm<T, O>, grid, dim3(T::kThreads), conv_shared_bytes<T>(), s, in, weight, bias, out);
  }

  // The weight gradient of layer l: (9 in) x out. Big tiles where both sides fill them; the
  // pixel sum is split into as many parts as keep the blocks within one wave (the blocks all
  // SMs hold at once), with at least 4 staged tiles per split. (14 to 21 rounded the splits
  // up to about twice the SMs' blocks: 270 blocks for a wave of 264 at batch 256, a second
  // wave of 6 blocks that took as long as the first.)
  struct WeightPlan {
    TileKind kind;
    int splits;
  };
  WeightPlan weight_plan(int l, int batch) const {
    const int M = 9 * in_ch_[l], N = out_ch_[l];
    TileKind kind = TileKind::small;
    if (N <= 8) kind = TileKind::narrow;
    else if (tiles_ == kTilesBig || (tiles_ == kTilesAuto && M >= BigTile::kM && N >= BigTile::kN)) kind = TileKind::big;
    const int tm = kind == TileKind::big ? BigTile::kM : kind == TileKind::small ? SmallTile::kM : NarrowTile::kM;
    const int tn = kind == TileKind::big ? BigTile::kN : kind == TileKind::small ? SmallTile::kN : NarrowTile::kN;
    const int blocks = ceil_div(M, tm) * ceil_div(N, tn);
    const int wave = sms_ * weight_resident_[int(kind)];
    const int tiles = ceil_div(batch * int(L_[l].pixels()), kK);
    return {kind, std::max(1, std::min(wave / blocks, tiles / 4))};
  }

  void weight_gradient(int l, const float* in, const float* d_out) {
    const Conv& c = L_[l];
    const WeightShape s{batch_, c.height, c.width, in_ch_[l], out_ch_[l], splits_[l]};
    switch (weight_tile_[l]) {
      case TileKind::big:
        launch_weight<BigTile>(s, in, d_out);
        break;
      case TileKind::small:
        launch_weight<SmallTile>(s, in, d_out);
        break;
      case TileKind::narrow:
        launch_weight<NarrowTile>(s, in, d_out);
        break;
    }
    launch(gather_weight_gradient, size_t(9) * s.in_ch * s.out_ch + s.out_ch, c.in, c.out, s.in_ch, s.out_ch, s.splits,
           partials_.data(), state_.gradient.data() + c.weight);  // the bias follows its weights
  }
  template <class T>
  void launch_weight(const WeightShape& s, const float* in, const float* d_out) {
    const dim3 grid(unsigned(ceil_div(9 * s.in_ch, T::kM)), unsigned(ceil_div(s.out_ch, T::kN)), unsigned(s.splits));
    launch_grid(weight_gemm<T, O>, grid, dim3(T::kThreads), weight_shared_bytes<T>(), s, in, d_out, partials_.data());
  }

  // Before every forward pass: the weights rounded and arranged, all layers in one launch.
  void prepare(int) override {
    AllWeights all;
    size_t most = 0;
    for (int l = 0; l < kLayers; ++l) {
      all.layer[l] = {L_[l].in, L_[l].out, in_ch_[l], out_ch_[l], state_.params.data() + L_[l].weight,
                      forward_weights_.data() + arranged_at_[l], backward_weights_.data() + arranged_at_[l]};
      most = std::max(most, L_[l].weight_count());
    }
    // conv5's direct kernels read the float master weights: only the products' layers.
    launch_grid(arrange_weights<O>, dim3(unsigned((most + threads_ - 1) / threads_), kConv5), dim3(threads_), 0, all);
  }

  // Bias and ReLU in the product's epilogue. conv5 reads a4 (a4_), not its upsampled copy
  // `in` (u4), which upsample() no longer writes.
  void conv(int l, int n, const float* in, float* out, bool relu) override {
    if (l == kConv5) {
      const Conv5Shape s = conv5_shape(n);
      const int plane = (s.band + 2) * (s.w + 2) + 1;
      launch_grid(conv5_forward, dim3(unsigned(s.h / s.band), unsigned(n)), dim3(unsigned(s.band * s.w)),
                  size_t(kChunk5) * (plane + kRow5) * sizeof(float), s, a4_.data(),
                  state_.params.data() + L_[l].weight, state_.params.data() + L_[l].bias, out);
      return;
    }
    // conv1 and conv2: pooled in the epilogue where the tile's warps hold whole windows; a1 (a2)
    // is then not written, and pool() and pool_backward() use what the epilogue kept.
    pooled_[l] = l < kPooled && pooled_tile(n, l);
    float* pooled = !pooled_[l] ? nullptr : l == 0 ? p1_.data() : p2_.data();
    convolve(n, L_[l], in_ch_[l], out_ch_[l], in, forward_weights_.data() + arranged_at_[l], state_.params.data() + L_[l].bias,
             L_[l].out, relu, out, pooled, pooled ? winners_[l].data() : nullptr);
  }

  // Whether layer l's product at n images can pool in its epilogue: widths of 8, 16 or 32
  // whose window pairs of rows fit a warp's rows, whole groups of 8 channels.
  bool pooled_tile(int n, int l) const {
    const int w = L_[l].width, columns = out_ch_[l];
    if ((w != 8 && w != 16 && w != 32) || L_[l].height % 2 || columns % 8) return false;
    const TileKind kind = conv_tile(n, L_[l], columns);
    const int warp_rows = kind == TileKind::big ? BigTile::kWarpM : kind == TileKind::small ? SmallTile::kWarpM : NarrowTile::kWarpM;
    return warp_rows % (2 * w) == 0;
  }
  void pool(int l, int n, const float* a, float* pooled) override {
    if (!pooled_[l]) NhwcLayers::pool(l, n, a, pooled);
  }
  void pool_backward(int l, const float* a, const float* pooled, const float* d_pooled, float* d_a) override {
    if (!pooled_[l]) return NhwcLayers::pool_backward(l, a, pooled, d_pooled, d_a);
    const size_t quads = size_t(batch_) * L_[l].pixels() / 4 * out_ch_[l] / 4;
    launch(unpool_winners, quads, quads, L_[l].height, L_[l].width, out_ch_[l], winners_[l].data(), d_pooled, d_a);
  }

  // Upsampling a4 is left to conv5, which reads a4 itself.
  void upsample(int l, int n, const float* a, float* up) override {
    if (l != kConv5 - 1) NhwcLayers::upsample(l, n, a, up);
  }
  // conv5's backward pass ends at the gradient of a4 (d_a4_), through upsampling and conv4's
  // ReLU: nothing is left for upsample_backward, and conv4's backward pass reads d_a4_.
  void upsample_backward(int l, const float* d_up, const float* a, float* d_a) override {
    if (l != kConv5 - 1) NhwcLayers::upsample_backward(l, d_up, a, d_a);
  }

  // The weight and bias gradients of layer l, and the gradient of its input (not for conv1).
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    if (l == kConv5) {
      const int splits = conv5_splits(batch_);
      const size_t count = size_t(kTaps5) * L_[l].in + kOut5;
      launch_grid(conv5_backward, dim3(unsigned(splits)), dim3(kThreads5), size_t(L_[kConv5 - 1].width) * kRow5 * sizeof(float),
                  conv5_shape(batch_), a4_.data(), d_out, state_.params.data() + L_[l].weight, d_a4_.data(), partials_.data());
      launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                  count, splits, partials_.data(), state_.gradient.data() + L_[l].weight);  // the bias follows its weights
      return;
    }
    if (l == kConv5 - 1) d_out = d_a4_.data();
    weight_gradient(l, in, d_out);
    if (d_in)
      convolve(batch_, L_[l], out_ch_[l], in_ch_[l], d_out, backward_weights_.data() + arranged_at_[l], nullptr, 0,
               false, d_in);
  }

  int tiles_;
  bool configured_ = false;
  int sms_ = 0;
  std::array<int, 3> weight_resident_{};  // blocks per SM of weight_gemm, by TileKind
  int conv5_resident_ = 1;                // and of conv5_backward
  std::array<int, kLayers> splits_{};  // weight-gradient splits
  std::array<TileKind, kLayers> weight_tile_{};
  std::array<size_t, kLayers> arranged_at_{};
  core::DeviceArray<float> forward_weights_, backward_weights_;
  core::DeviceArray<float> d_a4_;  // the gradient of a4, from conv5_backward
  static constexpr int kPooled = 2;  // conv1 and conv2 are pooled
  std::array<bool, kLayers> pooled_{};  // by layer: pooled in the last forward pass's epilogue
  std::array<core::DeviceArray<unsigned char>, kPooled> winners_;  // a byte per pooled value
};

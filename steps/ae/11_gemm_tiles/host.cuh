// Which tiles a product uses (--tiles): 0 by the size of the product, 1 always SmallTile,
// 2 always BigTile (NarrowTile for at most 8 columns in every case).
enum TileChoice { kTilesAuto = 0, kTilesSmall = 1, kTilesBig = 2 };
enum class TileKind { big, small, narrow };
const char* tile_name(TileKind k) { return k == TileKind::big ? "128x128" : k == TileKind::small ? "64x64" : "128x8"; }

// The training step of every GPU step (common/ae/gpu_training.cuh) with these kernels and
// NhwcLayers' other layers (common/ae/elementwise_nhwc.cuh). SGD updates
// the weights in the reference layout; the products read the copies arrange_weights makes.
class ImplicitGemm final : public NhwcLayers {
 public:
  ImplicitGemm(int threads, int tiles) : NhwcLayers(threads), tiles_(tiles) {}

  void describe(core::Fields& params) const override {
    LayeredTraining::describe(params);
    params.set("tiles", tiles_);
    if (!p_) return;
    // What the choice makes of the problem's minibatch (the timed run's; validation loads the
    // step again with smaller ones): the tiles of each product, and the weight gradient's splits.
    for (int l = 0; l < kLayers; ++l) {
      const WeightPlan plan = weight_plan(l, p_->batch);
      params.append("gemm")
          .set("forward", tile_name(conv_tile(p_->batch, L_[l], out_ch_[l])))
          .set("input_gradient", l ? tile_name(conv_tile(p_->batch, L_[l], in_ch_[l])) : "none")
          .set("weight_gradient", tile_name(plan.kind))
          .set("splits", plan.splits);
    }
  }

 private:
  void allocate_more(int batch) override {
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
    for (int l = 0; l < kLayers; ++l) {
      const WeightPlan plan = weight_plan(l, batch);
      weight_tile_[l] = plan.kind;
      splits_[l] = plan.splits;
      partials = std::max(partials, size_t(splits_[l]) * (size_t(9) * in_ch_[l] * out_ch_[l] + out_ch_[l]));
    }
    partials_.resize(partials);
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
                int biased, bool relu, float* out) {
    const ConvShape s{n, c.height, c.width, in_ch, out_ch, biased, relu};
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
    launch_grid(conv_gemm<T>, grid, dim3(T::kThreads), conv_shared_bytes<T>(), s, in, weight, bias, out);
  }

  // The weight gradient of layer l: (9 in) x out. Big tiles where both sides fill them; the
  // pixel sum is split so that the blocks fill every SM about twice over (four times for the
  // 4-warp tiles), with at least 4 staged tiles per split.
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
    const int wanted = sms_ * (kind == TileKind::big ? 2 : 4);
    const int tiles = ceil_div(batch * int(L_[l].pixels()), kK);
    return {kind, std::max(1, std::min(ceil_div(wanted, blocks), tiles / 4))};
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
    launch_grid(weight_gemm<T>, grid, dim3(T::kThreads), weight_shared_bytes<T>(), s, in, d_out, partials_.data());
  }

  // Before every forward pass: the weights arranged, all layers in one launch.
  void prepare(int) override {
    AllWeights all;
    size_t most = 0;
    for (int l = 0; l < kLayers; ++l) {
      all.layer[l] = {L_[l].in, L_[l].out, in_ch_[l], out_ch_[l], state_.params.data() + L_[l].weight,
                      forward_weights_.data() + arranged_at_[l], backward_weights_.data() + arranged_at_[l]};
      most = std::max(most, L_[l].weight_count());
    }
    launch_grid(arrange_weights, dim3(unsigned((most + threads_ - 1) / threads_), kLayers), dim3(threads_), 0, all);
  }

  // Bias and ReLU in the product's epilogue.
  void conv(int l, int n, const float* in, float* out, bool relu) override {
    convolve(n, L_[l], in_ch_[l], out_ch_[l], in, forward_weights_.data() + arranged_at_[l], state_.params.data() + L_[l].bias,
             L_[l].out, relu, out);
  }

  // The weight and bias gradients of layer l, and the gradient of its input (not for conv1).
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    weight_gradient(l, in, d_out);
    if (d_in)
      convolve(batch_, L_[l], out_ch_[l], in_ch_[l], d_out, backward_weights_.data() + arranged_at_[l], nullptr, 0,
               false, d_in);
  }

  int tiles_;
  int sms_ = 0;
  std::array<int, kLayers> splits_{};  // weight-gradient splits
  std::array<TileKind, kLayers> weight_tile_{};
  std::array<size_t, kLayers> arranged_at_{};
  core::DeviceArray<float> forward_weights_, backward_weights_;
};

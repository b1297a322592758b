// The training step of every GPU step (common/ae/gpu_training.cuh) with these convolutions and
// NhwcLayers' other layers and loss (common/ae/elementwise_nhwc.cuh).
class GpuTiled final : public NhwcLayers {
 public:
  explicit GpuTiled(int threads) : NhwcLayers(threads) {}

 private:
  void allocate_more(int batch) override {
    // The arranged weights with the padded channel counts, at offsets of their own.
    size_t arranged = 0;
    for (int l = 0; l < kLayers; ++l) {
      arranged_at_[l] = arranged;
      arranged += size_t(out_ch_[l]) * 9 * in_ch_[l];
    }
    forward_weights_.resize(arranged);
    backward_weights_.resize(arranged);
    CUDA_CHECK(cudaMemset(forward_weights_.data(), 0, arranged * sizeof(float)));
    CUDA_CHECK(cudaMemset(backward_weights_.data(), 0, arranged * sizeof(float)));
    // Partial sums of the weight gradients, and of the loss before them.
    int device = 0, sms = 0, shared_per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    size_t partials = loss_partials(batch);
    for (int l = 0; l < kLayers; ++l) {
      plan_[l] = gradient_geometry(L_[l], batch, sms, shared_per_sm);
      partials = std::max(partials, size_t(plan_[l].splits) * (L_[l].weight_count() + size_t(L_[l].out)));
    }
    partials_.resize(partials);
  }

  // A tiled convolution of n images: 16 output channels per thread, or 4 where there are
  // fewer than 16 (conv5's 3, stored as 4, would leave 12 of 16 idle).
  void convolve(int n, int in_ch, int out_ch, int h, int w, const float* in, const float* weight, const float* bias,
                int biased, bool relu, float* out) {
    const int per_thread = out_ch >= 16 ? 16 : 4;
    const TileGeometry g = tile_geometry(out_ch, h, w, per_thread);
    const dim3 grid(unsigned(n * g.tiles), unsigned(ceil_div(out_ch, g.block_out)));
    const dim3 block(unsigned(g.tile_w), unsigned(g.tile_h / kRowsPerThread), unsigned(g.block_out / per_thread));
    if (per_thread == 16)
      launch_grid(conv_tiled<16>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, bias, biased, relu, out);
    else
      launch_grid(conv_tiled<4>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, bias, biased, relu, out);
  }

  // Adds `splits` rows of `count` partial sums into total.
  void sum_splits(size_t count, int splits, float* total) {
    launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                count, splits, partials_.data(), total);
  }

  void prepare(int) override {
    for (int l = 0; l < kLayers; ++l)
      launch(arrange_weights, L_[l].weight_count(), L_[l].in, L_[l].out, in_ch_[l], out_ch_[l],
             state_.params.data() + L_[l].weight, forward_weights_.data() + arranged_at_[l],
             backward_weights_.data() + arranged_at_[l]);
  }

  void conv(int l, int n, const float* in, float* out, bool relu) override {
    const Conv& c = L_[l];
    convolve(n, in_ch_[l], out_ch_[l], c.height, c.width, in, forward_weights_.data() + arranged_at_[l],
             state_.params.data() + c.bias, c.out, relu, out);
  }

  // The weight and bias gradients of layer l (whole batch), and the gradient of its input.
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    const Conv& c = L_[l];
    const GradientGeometry& g = plan_[l];
    const dim3 grid(unsigned(ceil_div(c.out, g.out_groups * kGradOut) * g.in_blocks), unsigned(g.splits));
    launch_grid(conv_weight_gradient, grid, dim3(unsigned(g.out_groups * g.in_groups)), g.shared, batch_, c.in, c.out,
                in_ch_[l], out_ch_[l], c.height, c.width, g, in, d_out, partials_.data());
    sum_splits(c.weight_count() + size_t(c.out), g.splits, state_.gradient.data() + c.weight);  // the bias follows its weights
    if (d_in)
      convolve(batch_, out_ch_[l], in_ch_[l], c.height, c.width, d_out, backward_weights_.data() + arranged_at_[l], nullptr,
               0, false, d_in);
  }

  std::array<GradientGeometry, kLayers> plan_;
  std::array<size_t, kLayers> arranged_at_{};
  core::DeviceArray<float> forward_weights_, backward_weights_;  // arrange_weights' orders, padded
};

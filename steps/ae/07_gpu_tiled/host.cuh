// The training step of every GPU step (common/ae/gpu_training.cuh) with these convolutions and
// loss, elementwise.cuh's other layers (NCHW), and the activations' gradients in two buffers
// used in turn.
class GpuTiled final : public ElementwiseLayers {
 public:
  explicit GpuTiled(int threads) : ElementwiseLayers(threads, Gradients::in_turn) {}

 private:
  void allocate_more(int batch) override {
    forward_weights_.resize(state_.params.size());
    backward_weights_.resize(state_.params.size());
    // Partial sums of the weight gradients, and of the loss before them.
    int device = 0, sms = 0, shared_per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    size_t partials = (size_t(batch) * p_->data->image_size() + threads_ - 1) / threads_;
    for (int l = 0; l < kLayers; ++l) {
      plan_[l] = gradient_geometry(L_[l], batch, sms, shared_per_sm);
      partials = std::max(partials, size_t(plan_[l].splits) * (L_[l].weight_count() + size_t(L_[l].out)));
    }
    partials_.resize(partials);
  }

  // A tiled convolution of n images: 16 output channels per thread, or 4 where there are
  // fewer than 16 (conv5's 3 would leave 13 of 16 idle).
  void convolve(int n, int in_ch, int out_ch, int h, int w, const float* in, const float* weight, const float* bias,
                float* out) {
    const int per_thread = out_ch >= 16 ? 16 : 4;
    const TileGeometry g = tile_geometry(out_ch, h, w, per_thread);
    const dim3 grid(unsigned(n * g.tiles), unsigned(ceil_div(out_ch, g.block_out)));
    const dim3 block(unsigned(g.tile_w), unsigned(g.tile_h / kRowsPerThread), unsigned(g.block_out / per_thread));
    if (per_thread == 16)
      launch_grid(conv_tiled<16>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, bias, out);
    else
      launch_grid(conv_tiled<4>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, bias, out);
  }

  // Adds `splits` rows of `count` partial sums into total.
  void sum_splits(size_t count, int splits, float* total) {
    launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                count, splits, partials_.data(), total);
  }

  void prepare(int) override {
    for (const Conv& c : L_)
      launch(arrange_weights, c.weight_count(), c.in, c.out, state_.params.data() + c.weight, forward_weights_.data() + c.weight,
             backward_weights_.data() + c.weight);
  }

  void conv(int l, int n, const float* in, float* out, bool relu) override {
    const Conv& c = L_[l];
    convolve(n, c.in, c.out, c.height, c.width, in, forward_weights_.data() + c.weight, state_.params.data() + c.bias, out);
    if (relu) relu_in_place(l, n, out);
  }

  // The loss's block sums, added by the same summing kernel as the weight gradients.
  void loss_gradient(const float* x, float*, float* d_y, float* loss) override {
    const size_t outputs = size_t(batch_) * p_->data->image_size();
    const float scale = 2.0f / float(outputs), mean = 1.0f / float(outputs);
    const unsigned blocks = unsigned((outputs + threads_ - 1) / threads_);
    launch_grid(ae::loss_gradient, dim3(blocks), dim3(threads_), threads_ * sizeof(float), outputs, scale, mean, d_y, x,
                partials_.data());
    sum_splits(1, int(blocks), loss);
  }

  // The weight and bias gradients of layer l (whole batch), and the gradient of its input.
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    const Conv& c = L_[l];
    const GradientGeometry& g = plan_[l];
    const dim3 grid(unsigned(ceil_div(c.out, g.out_groups * kGradOut) * g.in_blocks), unsigned(g.splits));
    launch_grid(conv_weight_gradient, grid, dim3(unsigned(g.out_groups * g.in_groups)), g.shared, batch_, c.in, c.out,
                c.height, c.width, g, in, d_out, partials_.data());
    sum_splits(c.weight_count() + size_t(c.out), g.splits, state_.gradient.data() + c.weight);  // the bias follows its weights
    if (d_in)
      convolve(batch_, c.out, c.in, c.height, c.width, d_out, backward_weights_.data() + c.weight, nullptr, d_in);
  }

  std::array<GradientGeometry, kLayers> plan_;
  core::DeviceArray<float> forward_weights_, backward_weights_;  // arrange_weights' orders, at each weight's offset
  core::DeviceArray<float> partials_;
};

// A GpuStep (common/ae/gpu_training.cuh: the images, the training state, store() and
// reconstruct()) whose training step is its own: the fused kernels above.
class GpuFused final : public GpuStep {
 public:
  explicit GpuFused(int threads) : GpuStep(threads, Layout::nchw) {}

  void allocate(int batch) override {
    forward_weights_.resize(state_.params.size());
    backward_weights_.resize(state_.params.size());
    // What the backward pass needs of the forward pass, for a minibatch or for the images
    // reconstruct() is asked for: the pooled outputs and their windows' winners (not conv1's
    // and conv2's full-resolution activations, which 07 kept), a3 and a4, and their upsamplings
    // u3 and u4, conv4's and conv5's inputs.
    const size_t n = size_t(capacity_);
    auto size = [n](const Conv& c, int ch) { return n * ch * c.pixels(); };
    p1_.resize(size(L_[1], L_[1].in)), winner1_.resize(p1_.size());
    p2_.resize(size(L_[2], L_[2].in)), winner2_.resize(p2_.size());
    a3_.resize(size(L_[2], L_[2].out));
    a4_.resize(size(L_[3], L_[3].out));
    u3_.resize(size(L_[3], L_[3].in));
    u4_.resize(size(L_[4], L_[4].in));
    // The reconstruction's gradient and every activation gradient: two buffers of the largest
    // size (backward() says which holds what when).
    size_t largest = 0;
    for (const Conv& c : L_) largest = std::max({largest, size(c, c.in), size(c, c.out)});
    for (auto& g : gradients_) g.resize(largest);
    // Partial sums of the weight gradients, and of the loss (one per block of conv5) before them.
    int device = 0, sms = 0, shared_per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    const Conv& last = L_[kLayers - 1];
    const TileGeometry loss_tiles = tile_geometry(last.out, last.height, last.width, per_thread(last.out));
    loss_blocks_ = batch * loss_tiles.tiles * ceil_div(last.out, loss_tiles.block_out);
    size_t partials = size_t(loss_blocks_);
    for (int l = 0; l < kLayers; ++l) {
      plan_[l] = gradient_geometry(L_[l], batch, sms, shared_per_sm);
      partials = std::max(partials, size_t(plan_[l].splits) * (L_[l].weight_count() + size_t(L_[l].out)));
    }
    partials_.resize(partials);
  }

  void train(long long steps) override {
    state_.reserve(t_ + steps);
    for (long long s = 0; s < steps; ++s, ++t_) {
      const float* x = minibatch(t_);
      forward(x, batch_, true);
      sum_splits(1, loss_blocks_, state_.losses() + t_);  // conv5's block sums, in a fixed order
      backward(x);
      launch(sgd, state_.params.size(), state_.params.size(), float(p_->lr), float(p_->momentum), state_.gradient.data(),
             state_.velocity.data(), state_.params.data());
    }
  }

 private:
  // reconstruct()'s forward pass: the reconstruction y into gradients_[0].
  void forward(const float* x, int n) override { forward(x, n, false); }
  float* reconstruction() override { return gradients_[0].data(); }

  // 16 output channels per thread, or 4 where there are fewer than 16 (conv5's 3 would leave
  // 13 of 16 idle).
  static int per_thread(int out_ch) { return out_ch >= 16 ? 16 : 4; }

  // A tiled convolution of n images on an h x w grid, its sums finished as kMode says.
  template <Output kMode>
  void convolve(int n, int in_ch, int out_ch, int h, int w, const float* in, const float* weight, const Epilogue& e) {
    const TileGeometry g = tile_geometry(out_ch, h, w, per_thread(out_ch));
    const dim3 grid(unsigned(n * g.tiles), unsigned(ceil_div(out_ch, g.block_out)));
    const dim3 block(unsigned(g.tile_w), unsigned(g.tile_h / kRowsPerThread), unsigned(g.block_out / per_thread(out_ch)));
    if (per_thread(out_ch) == 16)
      launch_grid(conv_tiled<16, kMode>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, e);
    else
      launch_grid(conv_tiled<4, kMode>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, e);
  }

  // Layer l forward on n images.
  template <Output kMode>
  void conv(int l, int n, const float* in, Epilogue e) {
    const Conv& c = L_[l];
    e.bias = state_.params.data() + c.bias;
    convolve<kMode>(n, c.in, c.out, c.height, c.width, in, forward_weights_.data() + c.weight, e);
  }

  // x2 nearest-neighbour upsampling of layer l's output a, n images (07's kernel, elementwise.cuh).
  void upsample(int l, int n, const float* a, float* up) {
    const Conv& c = L_[l];
    launch(up_forward, size_t(n) * c.out * c.pixels() * 4, size_t(n) * c.out, c.height, c.width, a, up);
  }

  // Adds `splits` rows of `count` partial sums into total.
  void sum_splits(size_t count, int splits, float* total) {
    launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                count, splits, partials_.data(), total);
  }

  // Training (x the minibatch): the reconstruction's gradient d_y and the loss's block sums;
  // otherwise the reconstruction y. Either goes to gradients_[0].
  void forward(const float* x, int n, bool training) {
    for (const Conv& c : L_)
      launch(arrange_weights, c.weight_count(), c.in, c.out, state_.params.data() + c.weight, forward_weights_.data() + c.weight,
             backward_weights_.data() + c.weight);
    Epilogue e;
    e.out = p1_.data(), e.winner = winner1_.data();
    conv<Output::bias_relu_pool>(0, n, x, e);
    e.out = p2_.data(), e.winner = winner2_.data();
    conv<Output::bias_relu_pool>(1, n, p1_.data(), e);
    e = Epilogue{};
    e.out = a3_.data();
    conv<Output::bias_relu>(2, n, p2_.data(), e);
    upsample(2, n, a3_.data(), u3_.data());
    e.out = a4_.data();
    conv<Output::bias_relu>(3, n, u3_.data(), e);
    upsample(3, n, a4_.data(), u4_.data());
    e.out = gradients_[0].data();
    if (training) {
      const size_t outputs = size_t(n) * p_->data->image_size();
      e.target = x, e.partial = partials_.data(), e.scale = 2.0f / float(outputs), e.mean = 1.0f / float(outputs);
      conv<Output::bias_loss>(4, n, u4_.data(), e);
    } else {
      conv<Output::bias>(4, n, u4_.data(), e);
    }
  }

  // The weight and bias gradients of layer l over the minibatch.
  void weight_gradient(int l, const float* in, const float* d_out) {
    const Conv& c = L_[l];
    const GradientGeometry& g = plan_[l];
    const dim3 grid(unsigned(ceil_div(c.out, g.out_groups * kGradOut) * g.in_blocks), unsigned(g.splits));
    launch_grid(conv_weight_gradient, grid, dim3(unsigned(g.out_groups * g.in_groups)), g.shared, batch_, c.in,
                c.out, c.height, c.width, g, in, d_out, partials_.data());
    sum_splits(c.weight_count() + size_t(c.out), g.splits, state_.gradient.data() + c.weight);  // the bias follows its weights
  }

  // The gradient of layer l's input, written as it is.
  void input_gradient(int l, const float* d_out, float* d_in) {
    const Conv& c = L_[l];
    Epilogue e;
    e.out = d_in;
    convolve<Output::plain>(batch_, c.out, c.in, c.height, c.width, d_out, backward_weights_.data() + c.weight, e);
  }

  // The gradient of layer l's ReLU output a from that of its upsampling (d_up): the adjoint
  // (the sum of each 2x2 window), then ReLU's mask. 07's kernels (elementwise.cuh).
  void upsample_backward(int l, const float* d_up, const float* a, float* d_a) {
    const Conv& c = L_[l];
    const size_t n = size_t(batch_) * c.out * c.pixels();
    launch(up_backward, n, size_t(batch_) * c.out, c.height, c.width, d_up, d_a);
    launch(relu_backward, n, n, a, d_a);
  }

  // The gradient of layer l's ReLU output from that of its pooled output, through the winners.
  void unpool_backward(int l, const float* pooled, const unsigned char* winner, const float* d_pooled, float* d_a) {
    const Conv& c = L_[l];
    launch(unpool_relu, size_t(batch_) * c.out * c.pixels() / 4, size_t(batch_) * c.out, c.height / 2, c.width / 2,
           d_pooled, pooled, winner, d_a);
  }

  void backward(const float* x) {
    // Each gradient is read only to make the next one (and its layer's weight gradient), so
    // two buffers serve them all, in turn; the first starts as d_y.
    float* const d_y = gradients_[0].data();
    float* const d_u4 = gradients_[1].data();
    float* const d_a4 = gradients_[0].data();
    float* const d_u3 = gradients_[1].data();
    float* const d_a3 = gradients_[0].data();
    float* const d_p2 = gradients_[1].data();
    float* const d_a2 = gradients_[0].data();
    float* const d_p1 = gradients_[1].data();
    float* const d_a1 = gradients_[0].data();
    weight_gradient(4, u4_.data(), d_y);
    input_gradient(4, d_y, d_u4);
    upsample_backward(3, d_u4, a4_.data(), d_a4);
    weight_gradient(3, u3_.data(), d_a4);
    input_gradient(3, d_a4, d_u3);
    upsample_backward(2, d_u3, a3_.data(), d_a3);
    weight_gradient(2, p2_.data(), d_a3);
    input_gradient(2, d_a3, d_p2);
    unpool_backward(1, p2_.data(), winner2_.data(), d_p2, d_a2);
    weight_gradient(1, p1_.data(), d_a2);
    input_gradient(1, d_a2, d_p1);
    unpool_backward(0, p1_.data(), winner1_.data(), d_p1, d_a1);
    weight_gradient(0, x, d_a1);  // the image needs no gradient
  }

  int loss_blocks_ = 0;
  std::array<GradientGeometry, kLayers> plan_;
  core::DeviceArray<float> forward_weights_, backward_weights_;  // the two orders of the convolutions, at each weight's offset
  core::DeviceArray<float> p1_, p2_, a3_, a4_, u3_, u4_;
  core::DeviceArray<unsigned char> winner1_, winner2_;
  std::array<core::DeviceArray<float>, 2> gradients_;
  core::DeviceArray<float> partials_;
};

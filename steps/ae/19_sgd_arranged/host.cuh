// A GpuStep (common/ae/gpu_training.cuh: the images, the training state, store() and
// reconstruct()) whose training step is its own: the fused kernels above.
class GpuFused final : public GpuStep {
 public:
  explicit GpuFused(int threads) : GpuStep(threads, Layout::nchw) {}

  void allocate(int batch) override {
    for (const Conv& c : L_)
      if (c.bias != c.weight + c.weight_count())
        throw core::RuntimeError("a layer's bias must follow its weights (sgd_arranged updates both)");
    forward_weights_.resize(state_.params.size());
    backward_weights_.resize(state_.params.size());
    for (const Conv& c : L_)
      launch(arrange_weights, c.weight_count(), c.in, c.out, state_.params.data() + c.weight, forward_weights_.data() + c.weight,
             backward_weights_.data() + c.weight);
    // What the backward pass needs of the forward pass, for a minibatch or for the images
    // reconstruct() is asked for: the pooled outputs and their windows' winners (not conv1's
    // and conv2's full-resolution activations, which 07 kept), a3 and a4 (not their upsamplings).
    const size_t n = size_t(capacity_);
    auto size = [n](const Conv& c, int ch) { return n * ch * c.pixels(); };
    p1_.resize(size(L_[1], L_[1].in)), winner1_.resize(p1_.size());
    p2_.resize(size(L_[2], L_[2].in)), winner2_.resize(p2_.size());
    a3_.resize(size(L_[2], L_[2].out));
    a4_.resize(size(L_[3], L_[3].out));
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
      for (const Conv& c : L_)
        launch(sgd_arranged, c.weight_count() + size_t(c.out), c.in, c.out, float(p_->lr), float(p_->momentum),
               state_.gradient.data() + c.weight, state_.velocity.data() + c.weight, state_.params.data() + c.weight,
               forward_weights_.data() + c.weight, backward_weights_.data() + c.weight);
    }
  }

 private:
  // reconstruct()'s forward pass: the reconstruction y into gradients_[0].
  void forward(const float* x, int n) override { forward(x, n, false); }
  float* reconstruction() override { return gradients_[0].data(); }

  // 16 output channels per thread, or 4 where there are fewer than 16 (conv5's 3 would leave
  // 13 of 16 idle).
  static int per_thread(int out_ch) { return out_ch >= 16 ? 16 : 4; }

  // A tiled convolution of n images on an h x w grid, its input read as kIn says and its sums
  // finished as kMode says.
  template <Input kIn, Output kMode>
  void convolve(int n, int in_ch, int out_ch, int h, int w, const float* in, const float* weight, const Epilogue& e) {
    const TileGeometry g = tile_geometry(out_ch, h, w, per_thread(out_ch));
    const dim3 grid(unsigned(n * g.tiles), unsigned(ceil_div(out_ch, g.block_out)));
    const dim3 block(unsigned(g.tile_w), unsigned(g.tile_h / kRowsPerThread), unsigned(g.block_out / per_thread(out_ch)));
    if (per_thread(out_ch) == 16)
      launch_grid(conv_tiled<16, kIn, kMode>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, e);
    else
      launch_grid(conv_tiled<4, kIn, kMode>, grid, block, g.shared, in_ch, out_ch, h, w, g, in, weight, e);
  }

  // Layer l forward on n images.
  template <Input kIn, Output kMode>
  void conv(int l, int n, const float* in, Epilogue e) {
    const Conv& c = L_[l];
    e.bias = state_.params.data() + c.bias;
    convolve<kIn, kMode>(n, c.in, c.out, c.height, c.width, in, forward_weights_.data() + c.weight, e);
  }

  // Adds `splits` rows of `count` partial sums into total.
  void sum_splits(size_t count, int splits, float* total) {
    launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                count, splits, partials_.data(), total);
  }

  // Training (x the minibatch): the reconstruction's gradient d_y and the loss's block sums;
  // otherwise the reconstruction y. Either goes to gradients_[0].
  void forward(const float* x, int n, bool training) {
    Epilogue e;
    e.out = p1_.data(), e.winner = winner1_.data();
    conv<Input::plain, Output::bias_relu_pool>(0, n, x, e);
    e.out = p2_.data(), e.winner = winner2_.data();
    conv<Input::plain, Output::bias_relu_pool>(1, n, p1_.data(), e);
    e = Epilogue{};
    e.out = a3_.data();
    conv<Input::plain, Output::bias_relu>(2, n, p2_.data(), e);
    e.out = a4_.data();
    conv<Input::upsampled, Output::bias_relu>(3, n, a3_.data(), e);
    e.out = gradients_[0].data();
    if (training) {
      const size_t outputs = size_t(n) * p_->data->image_size();
      e.target = x, e.partial = partials_.data(), e.scale = 2.0f / float(outputs), e.mean = 1.0f / float(outputs);
      conv<Input::upsampled, Output::bias_loss>(4, n, a4_.data(), e);
    } else {
      conv<Input::upsampled, Output::bias>(4, n, a4_.data(), e);
    }
  }

  // The weight and bias gradients of layer l over the minibatch (its input read as kIn says).
  template <Input kIn>
  void weight_gradient(int l, const float* in, const float* d_out) {
    const Conv& c = L_[l];
    const GradientGeometry& g = plan_[l];
    const dim3 grid(unsigned(ceil_div(c.out, g.out_groups * kGradOut) * g.in_blocks), unsigned(g.splits));
    launch_grid(conv_weight_gradient<kIn>, grid, dim3(unsigned(g.out_groups * g.in_groups)), g.shared, batch_, c.in,
                c.out, c.height, c.width, g, in, d_out, partials_.data());
    sum_splits(c.weight_count() + size_t(c.out), g.splits, state_.gradient.data() + c.weight);  // the bias follows its weights
  }

  // The gradient of layer l's input, finished by kMode into the gradient of the activation
  // before the upsampling or pooling that made that input.
  template <Output kMode>
  void input_gradient(int l, const float* d_out, Epilogue e) {
    const Conv& c = L_[l];
    convolve<Input::plain, kMode>(batch_, c.out, c.in, c.height, c.width, d_out, backward_weights_.data() + c.weight, e);
  }

  void backward(const float* x) {
    // Each gradient is read only to make the next one (and its layer's weight gradient), so
    // two buffers serve them all, in turn; the first starts as d_y.
    float* const d_y = gradients_[0].data();
    float* const d_a4 = gradients_[1].data();
    float* const d_a3 = gradients_[0].data();
    float* const d_a2 = gradients_[1].data();
    float* const d_a1 = gradients_[0].data();
    Epilogue e;
    weight_gradient<Input::upsampled>(4, a4_.data(), d_y);
    e.out = d_a4, e.gate = a4_.data();
    input_gradient<Output::up_adjoint_relu>(4, d_y, e);
    weight_gradient<Input::upsampled>(3, a3_.data(), d_a4);
    e.out = d_a3, e.gate = a3_.data();
    input_gradient<Output::up_adjoint_relu>(3, d_a4, e);
    weight_gradient<Input::plain>(2, p2_.data(), d_a3);
    e.out = d_a2, e.gate = p2_.data(), e.winner = winner2_.data();
    input_gradient<Output::unpool_relu>(2, d_a3, e);
    weight_gradient<Input::plain>(1, p1_.data(), d_a2);
    e.out = d_a1, e.gate = p1_.data(), e.winner = winner1_.data();
    input_gradient<Output::unpool_relu>(1, d_a2, e);
    weight_gradient<Input::plain>(0, x, d_a1);  // the image needs no gradient
  }

  int loss_blocks_ = 0;
  std::array<GradientGeometry, kLayers> plan_;
  core::DeviceArray<float> forward_weights_, backward_weights_;  // the two orders of the convolutions, at each weight's offset
  core::DeviceArray<float> p1_, p2_, a3_, a4_;
  core::DeviceArray<unsigned char> winner1_, winner2_;
  std::array<core::DeviceArray<float>, 2> gradients_;
  core::DeviceArray<float> partials_;
};

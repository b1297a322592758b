// The training step of every GPU step (common/ae/gpu_training.cuh) with these kernels and
// NhwcLayers' other layers (common/ae/elementwise_nhwc.cuh). SGD updates
// the weights in the reference layout; the products read the copies arrange_weights makes.
class ImplicitGemm final : public NhwcLayers {
 public:
  explicit ImplicitGemm(int threads) : NhwcLayers(threads) {}

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

  void convolve(int n, const Conv& c, int in_ch, int out_ch, const float* in, const float* weight, const float* bias,
                int biased, bool relu, float* out) {
    const ConvShape s{n, c.height, c.width, in_ch, out_ch, biased, relu};
    launch_conv<BigTile>(n * int(c.pixels()), s, in, weight, bias, out);
  }
  template <class T>
  void launch_conv(int M, const ConvShape& s, const float* in, const float* weight, const float* bias, float* out) {
    const dim3 grid(unsigned(ceil_div(M, T::kM)), unsigned(ceil_div(s.out_ch, T::kN)));
    launch_grid(conv_gemm<T>, grid, dim3(T::kThreads), conv_shared_bytes<T>(), s, in, weight, bias, out);
  }

  // Adds `splits` rows of `count` partial sums into total.
  void sum_splits(size_t count, int splits, float* total) {
    launch_grid(sum_partials, dim3(unsigned((count + 31) / 32)), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float),
                count, splits, partials_.data(), total);
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

  // The weight and bias gradients of layer l (08's), and the gradient of its input (not for conv1).
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    const Conv& c = L_[l];
    const GradientGeometry& g = plan_[l];
    const dim3 grid(unsigned(ceil_div(c.out, g.out_groups * kGradOut) * g.in_blocks), unsigned(g.splits));
    launch_grid(conv_weight_gradient, grid, dim3(unsigned(g.out_groups * g.in_groups)), g.shared, batch_, c.in, c.out,
                in_ch_[l], out_ch_[l], c.height, c.width, g, in, d_out, partials_.data());
    sum_splits(c.weight_count() + size_t(c.out), g.splits, state_.gradient.data() + c.weight);  // the bias follows its weights
    if (d_in)
      convolve(batch_, L_[l], out_ch_[l], in_ch_[l], d_out, backward_weights_.data() + arranged_at_[l], nullptr, 0,
               false, d_in);
  }

  std::array<GradientGeometry, kLayers> plan_;
  std::array<size_t, kLayers> arranged_at_{};
  core::DeviceArray<float> forward_weights_, backward_weights_;
};

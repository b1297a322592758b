struct Options {
  int threads = 256;
  bool timed_search = true;   // cudnnFind*AlgorithmEx; false: cudnnGet*_v7
  bool transforms = false;    // Winograd and FFT algorithms allowed (see is_transform)
  size_t workspace_limit = 0;  // bytes
  bool cudnn_pooling = false;
};

// The training step of every GPU step (common/ae/gpu_training.cuh) with cuDNN's convolutions and
// ReLU, elementwise.cuh's other layers (NCHW), and the activations' gradients in two buffers
// used in turn (07's).
class Cudnn final : public ElementwiseLayers {
 public:
  explicit Cudnn(const Options& o) : ElementwiseLayers(o.threads, Gradients::in_turn), o_(o) {
    CUDNN_CHECK(cudnnCreate(&handle_));  // on the legacy default stream, with our kernels
    CUDNN_CHECK(cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    // MAX_DETERMINISTIC: a max-pooling backward pass that gives each window's gradient to one input.
    CUDNN_CHECK(cudnnSetPooling2dDescriptor(pool_, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0,
                                            2, 2));
  }
  ~Cudnn() override { cudnnDestroy(handle_); }

  // The cuDNN version and, for the minibatch of the timed runs, the algorithm of every pass of
  // every layer with its workspace (and its trial time when timed).
  void describe(core::Fields& params) const override {
    params.set("cudnn_version", long(cudnnGetVersion()));
    params.set("math", "FMA (fp32), NCHW");
    params.set("workspace_bytes", workspace_.size());
    if (!p_) return;
    const auto found = plans_.find(p_->batch);
    if (found == plans_.end() || !found->second->trains) return;
    const Plan& plan = *found->second;
    core::Fields layers = params.object("algorithms");
    auto entry = [](core::Fields e, const auto& c) {
      e.set("algo", algorithm_name(c.algo)).set("workspace_bytes", c.workspace)
          .set("deterministic", c.determinism == CUDNN_DETERMINISTIC);
      if (c.ms > 0) e.set("trial_ms", c.ms);
    };
    for (int l = 0; l < kLayers; ++l) {
      core::Fields j = layers.object("conv" + std::to_string(l + 1));
      entry(j.object("forward"), plan.forward[l]);
      entry(j.object("backward_filter"), plan.backward_filter[l]);
      if (l > 0) entry(j.object("backward_data"), plan.backward_data[l]);
    }
  }

 private:
  // The descriptors and algorithms for minibatches of n images.
  struct Plan {
    int n = 0;
    bool trains = false;  // backward algorithms chosen too (not only for reconstruct())
    std::array<TensorDescriptor, kLayers> in, out;  // (n, in, h, w) and (n, out, h, w) of each convolution
    std::array<Choice<cudnnConvolutionFwdAlgo_t>, kLayers> forward;
    std::array<Choice<cudnnConvolutionBwdDataAlgo_t>, kLayers> backward_data;  // [0] unused: no image gradient
    std::array<Choice<cudnnConvolutionBwdFilterAlgo_t>, kLayers> backward_filter;
  };

  // The weight, bias and convolution descriptors depend on the model only.
  void set_model(const Model& m) {
    model_ = m;
    plans_.clear();
    for (int l = 0; l < kLayers; ++l) {
      const Conv& c = L_[l];
      CUDNN_CHECK(cudnnSetFilter4dDescriptor(weights_[l], CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, c.out, c.in, 3, 3));
      set_nchw(biases_[l], 1, c.out, 1, 1);
      // PyTorch's and the reference's convolution: out[y][x] += w[kh][kw] in[y + kh - 1][x + kw - 1].
      CUDNN_CHECK(cudnnSetConvolution2dDescriptor(convs_[l], 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
      CUDNN_CHECK(cudnnSetConvolutionMathType(convs_[l], CUDNN_FMA_MATH));
    }
  }

  // The plan for n images, made the first time n is met (with the backward passes when
  // `trains`). A timed search runs every algorithm on the step's own buffers, so it needs them
  // allocated (load() has) and may overwrite them: activations, the gradient buffers and the
  // parameter gradient, all of which a training step or reconstruct() writes before reading.
  Plan& plan(int n, bool trains) {
    std::unique_ptr<Plan>& slot = plans_[n];
    const bool fresh = !slot;
    if (fresh) {
      slot = std::make_unique<Plan>();
      slot->n = n;
      for (int l = 0; l < kLayers; ++l) {
        set_nchw(slot->in[l], n, L_[l].in, L_[l].height, L_[l].width);
        set_nchw(slot->out[l], n, L_[l].out, L_[l].height, L_[l].width);
      }
    }
    Plan& plan = *slot;
    if (!fresh && (plan.trains || !trains)) return plan;
    const size_t limit = o_.workspace_limit;
    if (o_.timed_search) workspace_.resize(std::max(workspace_.size(), limit));  // for the trials; shrunk below
    const std::string shape = " (" + std::to_string(n) + " images)";
    for (int l = 0; l < kLayers; ++l) {
      const std::string layer = "conv" + std::to_string(l + 1);
      const float* in = input(l);
      float* out = output(l);
      const float* w = state_.params.data() + L_[l].weight;
      if (fresh) plan.forward[l] = choose_forward(plan, l, in, w, out, layer + " forward" + shape);
      if (trains) {
        plan.backward_filter[l] =
            choose_backward_filter(plan, l, in, out, state_.gradient.data() + L_[l].weight, layer + " weight gradient" + shape);
        if (l > 0)
          plan.backward_data[l] =
              choose_backward_data(plan, l, w, out, d(1), layer + " input gradient" + shape);
      }
    }
    plan.trains = plan.trains || trains;
    // The workspace: the largest any chosen algorithm needs, for every plan made so far.
    size_t needed = 0;
    for (const auto& kv : plans_)
      for (int l = 0; l < kLayers; ++l) {
        needed = std::max(needed, kv.second->forward[l].workspace);
        if (kv.second->trains)
          needed = std::max({needed, kv.second->backward_data[l].workspace, kv.second->backward_filter[l].workspace});
      }
    workspace_.resize(needed);
    return plan;
  }

  Choice<cudnnConvolutionFwdAlgo_t> choose_forward(const Plan& plan, int l, const float* in, const float* w, float* out,
                                                   const std::string& what) {
    cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int count = 0;
    if (o_.timed_search)
      CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(handle_, plan.in[l], in, weights_[l], w, convs_[l], plan.out[l],
                                                         out, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, r,
                                                         workspace_.data(), o_.workspace_limit));
    else
      CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle_, plan.in[l], weights_[l], convs_[l], plan.out[l],
                                                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, r));
    auto c = pick(r, count, o_.workspace_limit, o_.transforms, o_.timed_search, what);
    CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(handle_, plan.in[l], weights_[l], convs_[l], plan.out[l], c.algo,
                                                        &c.workspace));
    return c;
  }

  Choice<cudnnConvolutionBwdFilterAlgo_t> choose_backward_filter(const Plan& plan, int l, const float* in,
                                                                 const float* d_out, float* d_w, const std::string& what) {
    cudnnConvolutionBwdFilterAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int count = 0;
    if (o_.timed_search)
      CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
          handle_, plan.in[l], in, plan.out[l], d_out, convs_[l], weights_[l], d_w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
          &count, r, workspace_.data(), o_.workspace_limit));
    else
      CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle_, plan.in[l], plan.out[l], convs_[l], weights_[l],
                                                                CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, r));
    auto c = pick(r, count, o_.workspace_limit, o_.transforms, o_.timed_search, what);
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(handle_, plan.in[l], plan.out[l], convs_[l], weights_[l],
                                                               c.algo, &c.workspace));
    return c;
  }

  Choice<cudnnConvolutionBwdDataAlgo_t> choose_backward_data(const Plan& plan, int l, const float* w, const float* d_out,
                                                             float* d_in, const std::string& what) {
    cudnnConvolutionBwdDataAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int count = 0;
    if (o_.timed_search)
      CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(
          handle_, weights_[l], w, plan.out[l], d_out, convs_[l], plan.in[l], d_in, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
          &count, r, workspace_.data(), o_.workspace_limit));
    else
      CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle_, weights_[l], plan.out[l], convs_[l], plan.in[l],
                                                              CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, r));
    auto c = pick(r, count, o_.workspace_limit, o_.transforms, o_.timed_search, what);
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(handle_, weights_[l], plan.out[l], convs_[l], plan.in[l],
                                                             c.algo, &c.workspace));
    return c;
  }

  // The buffers around layer l, for the algorithm trials: its input (the first images for
  // conv1) and its output (the reconstruction y for conv5, in the first gradient buffer as in 07).
  const float* input(int l) {
    switch (l) {
      case 0: return data_.data();
      case 1: return p1_.data();
      case 2: return p2_.data();
      case 3: return u3_.data();
      default: return u4_.data();
    }
  }
  float* output(int l) {
    switch (l) {
      case 0: return a1_.data();
      case 1: return a2_.data();
      case 2: return a3_.data();
      case 3: return a4_.data();
      default: return reconstruction();
    }
  }

  void allocate_more(int batch) override {
    if (model_.describe() != p_->model.describe() || plans_.empty()) set_model(p_->model);
    loss_blocks_ = int((size_t(batch) * p_->data->image_size() + threads_ - 1) / threads_);
    partials_.resize(size_t(loss_blocks_));
    plan_ = &plan(batch, true);
  }

  // The minibatch's plan, or reconstruct()'s for n images.
  void prepare(int n) override { current_ = n == plan_->n ? plan_ : &plan(n, false); }

  // conv + bias (+ ReLU in place) of layer l.
  void conv(int l, int, const float* in, float* out, bool relu) override {
    const Plan& plan = *current_;
    const float one = 1, zero = 0;
    CUDNN_CHECK(cudnnConvolutionForward(handle_, &one, plan.in[l], in, weights_[l], state_.params.data() + L_[l].weight,
                                        convs_[l], plan.forward[l].algo, workspace_.data(), workspace_.size(), &zero,
                                        plan.out[l], out));
    CUDNN_CHECK(cudnnAddTensor(handle_, &one, biases_[l], state_.params.data() + L_[l].bias, &one, plan.out[l], out));
    if (relu) CUDNN_CHECK(cudnnActivationForward(handle_, relu_, &one, plan.out[l], out, &zero, plan.out[l], out));
  }

  // 2x2 max pooling of layer l's output into layer l + 1's input. Ours by default: cuDNN does
  // not document which of equal maxima its backward pass picks, and the step must pick the
  // first, as the reference and PyTorch do (ties are common: flat image regions give equal
  // activations). --cudnn-pooling 1 uses cuDNN's, for the GPU to show whether it agrees.
  void pool(int l, int n, const float* in, float* out) override {
    const Plan& plan = *current_;
    const float one = 1, zero = 0;
    if (o_.cudnn_pooling)
      CUDNN_CHECK(cudnnPoolingForward(handle_, pool_, &one, plan.out[l], in, &zero, plan.in[l + 1], out));
    else
      ElementwiseLayers::pool(l, n, in, out);
  }

  // The gradient through pooling (cuDNN's or ours, as pool()), then through the ReLU.
  void pool_backward(int l, const float* in, const float* pooled, const float* d_pooled, float* d_in) override {
    const Plan& plan = *current_;
    const float one = 1, zero = 0;
    if (o_.cudnn_pooling)
      CUDNN_CHECK(cudnnPoolingBackward(handle_, pool_, &one, plan.in[l + 1], pooled, plan.in[l + 1], d_pooled, plan.out[l],
                                       in, &zero, plan.out[l], d_in));
    else
      launch(ae::pool_backward, size_t(plan.n) * L_[l].out * L_[l].pixels(), size_t(plan.n) * L_[l].out, L_[l].height,
             L_[l].width, in, d_pooled, d_in);
    relu_gradient(l, in, d_in);
  }

  // The gradient through upsampling (ours), then through the ReLU.
  void upsample_backward(int l, const float* d_up, const float* a, float* d_a) override {
    launch(up_backward, size_t(current_->n) * L_[l].out * L_[l].pixels(), size_t(current_->n) * L_[l].out, L_[l].height,
           L_[l].width, d_up, d_a);
    relu_gradient(l, a, d_a);
  }

  // ReLU's gradient in place: cuDNN reads the unit's output for both x and y (the forward
  // pass overwrote its input), and passes d only where that output is > 0.
  void relu_gradient(int l, const float* a, float* d) {
    const Plan& plan = *current_;
    const float one = 1, zero = 0;
    CUDNN_CHECK(cudnnActivationBackward(handle_, relu_, &one, plan.out[l], a, plan.out[l], d, plan.out[l], a, &zero,
                                        plan.out[l], d));
  }

  // The loss's block sums, added by one block in a fixed order.
  void loss_gradient(const float* x, float*, float* d_y, float* loss) override {
    const size_t outputs = size_t(current_->n) * p_->data->image_size();
    const float scale = 2.0f / float(outputs), mean = 1.0f / float(outputs);
    launch_grid(ae::loss_gradient, dim3(unsigned(loss_blocks_)), dim3(threads_), threads_ * sizeof(float), outputs, scale,
                mean, d_y, x, partials_.data());
    launch_grid(sum_losses, dim3(1), dim3(threads_), threads_ * sizeof(float), loss_blocks_, partials_.data(), loss);
  }

  // The weight and bias gradients of layer l (whole minibatch, each written, not added), and
  // the gradient of its input unless d_in is null.
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    const Plan& plan = *current_;
    const float one = 1, zero = 0;
    CUDNN_CHECK(cudnnConvolutionBackwardBias(handle_, &one, plan.out[l], d_out, &zero, biases_[l],
                                             state_.gradient.data() + L_[l].bias));
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle_, &one, plan.in[l], in, plan.out[l], d_out, convs_[l],
                                               plan.backward_filter[l].algo, workspace_.data(), workspace_.size(), &zero,
                                               weights_[l], state_.gradient.data() + L_[l].weight));
    if (d_in)
      CUDNN_CHECK(cudnnConvolutionBackwardData(handle_, &one, weights_[l], state_.params.data() + L_[l].weight, plan.out[l],
                                               d_out, convs_[l], plan.backward_data[l].algo, workspace_.data(),
                                               workspace_.size(), &zero, plan.in[l], d_in));
  }

  Options o_;
  cudnnHandle_t handle_ = nullptr;
  ActivationDescriptor relu_;
  PoolingDescriptor pool_;
  std::array<FilterDescriptor, kLayers> weights_;
  std::array<TensorDescriptor, kLayers> biases_;
  std::array<ConvolutionDescriptor, kLayers> convs_;
  std::map<int, std::unique_ptr<Plan>> plans_;  // by images per pass
  Plan* plan_ = nullptr;                         // the minibatch's
  Plan* current_ = nullptr;                      // the forward pass's (prepare())

  Model model_;
  int loss_blocks_ = 0;
  core::DeviceArray<float> partials_;
  core::DeviceArray<unsigned char> workspace_;
};

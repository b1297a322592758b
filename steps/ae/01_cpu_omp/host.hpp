// What one thread needs to train one image at a time: its activations, the gradients flowing
// back through them, and its share of the minibatch's weight gradient.
struct Workspace {
  std::vector<float> a1, p1, a2, p2, a3, u3, a4, u4, y;
  std::vector<float> d_y, d_u4, d_a4, d_u3, d_a3, d_p2, d_a2, d_p1, d_a1;
  std::vector<float> gradient;
  float error = 0;
};

class CpuOmp final : public Step {
 public:
  void load(const Problem& p, const std::vector<float>& initial, int batch) override {
    p_ = &p;
    batch_ = batch;
    L_ = layers(p.model);
    params_ = initial;
    velocity_.assign(initial.size(), 0.0f);
    gradient_.assign(initial.size(), 0.0f);
    losses_.clear();
    t_ = 0;
    workspaces_.resize(size_t(omp_get_max_threads()));
    for (Workspace& ws : workspaces_) {
      auto plane = [](const Conv& c, int ch) { return size_t(ch) * c.height * c.width; };
      ws.a1.resize(plane(L_[0], L_[0].out)), ws.p1.resize(plane(L_[1], L_[1].in));
      ws.a2.resize(plane(L_[1], L_[1].out)), ws.p2.resize(plane(L_[2], L_[2].in));
      ws.a3.resize(plane(L_[2], L_[2].out)), ws.u3.resize(plane(L_[3], L_[3].in));
      ws.a4.resize(plane(L_[3], L_[3].out)), ws.u4.resize(plane(L_[4], L_[4].in));
      ws.y.resize(plane(L_[4], L_[4].out));
      ws.d_y.resize(ws.y.size()), ws.d_u4.resize(ws.u4.size()), ws.d_a4.resize(ws.a4.size());
      ws.d_u3.resize(ws.u3.size()), ws.d_a3.resize(ws.a3.size()), ws.d_p2.resize(ws.p2.size());
      ws.d_a2.resize(ws.a2.size()), ws.d_p1.resize(ws.p1.size()), ws.d_a1.resize(ws.a1.size());
      ws.gradient.resize(initial.size());
    }
  }

  void train(long long steps) override {
    const size_t image_size = p_->data->image_size();
    const float lr = float(p_->lr), momentum = float(p_->momentum);
    for (long long s = 0; s < steps; ++s, ++t_) {
      const float* images = p_->data->image(minibatch_start(t_, batch_, p_->images()));
      // One parallel region per training step: the images, then the sum of the threads'
      // gradients and the update, each phase behind the barrier of its loop.
      // The runtime may give a smaller team than asked (OMP_DYNAMIC, thread limits): only the
      // workspaces of this step's team hold this step's gradients.
      size_t team = 0;
#pragma omp parallel num_threads(int(workspaces_.size()))
      {
#pragma omp single
        team = size_t(omp_get_num_threads());
        Workspace& ws = workspaces_[size_t(omp_get_thread_num())];
        std::fill(ws.gradient.begin(), ws.gradient.end(), 0.0f);
        ws.error = 0;
#pragma omp for schedule(static)
        for (int b = 0; b < batch_; ++b) ws.error += train_image(images + b * image_size, ws);
#pragma omp for schedule(static)
        for (size_t j = 0; j < params_.size(); ++j) {
          float g = 0;
          for (size_t w = 0; w < team; ++w) g += workspaces_[w].gradient[j];  // in thread order: reproducible
          gradient_[j] = g;
          velocity_[j] = momentum * velocity_[j] + g;
          params_[j] -= lr * velocity_[j];
        }
      }
      float error = 0;
      for (size_t w = 0; w < team; ++w) error += workspaces_[w].error;
      losses_.push_back(error / float(size_t(batch_) * image_size));
    }
  }

  void store(Trained& out) override {
    out.params = params_;
    out.gradient = gradient_;
    out.losses = losses_;
  }

  void reconstruct(int count, float* out) override {
    const size_t image_size = p_->data->image_size();
#pragma omp parallel for schedule(static) num_threads(int(workspaces_.size()))
    for (int b = 0; b < count; ++b) {
      Workspace& ws = workspaces_[size_t(omp_get_thread_num())];
      forward(p_->data->image(b), ws);
      std::copy(ws.y.begin(), ws.y.end(), out + b * image_size);
    }
  }

 private:
  void forward(const float* x, Workspace& ws) const {
    const float* p = params_.data();
    conv_forward(L_[0], p, x, ws.a1.data());
    relu(ws.a1.data(), ws.a1.size());
    pool_forward(L_[0].out, L_[0].height, L_[0].width, ws.a1.data(), ws.p1.data());
    conv_forward(L_[1], p, ws.p1.data(), ws.a2.data());
    relu(ws.a2.data(), ws.a2.size());
    pool_forward(L_[1].out, L_[1].height, L_[1].width, ws.a2.data(), ws.p2.data());
    conv_forward(L_[2], p, ws.p2.data(), ws.a3.data());
    relu(ws.a3.data(), ws.a3.size());
    up_forward(L_[2].out, L_[2].height, L_[2].width, ws.a3.data(), ws.u3.data());
    conv_forward(L_[3], p, ws.u3.data(), ws.a4.data());
    relu(ws.a4.data(), ws.a4.size());
    up_forward(L_[3].out, L_[3].height, L_[3].width, ws.a4.data(), ws.u4.data());
    conv_forward(L_[4], p, ws.u4.data(), ws.y.data());
  }

  // Forward and backward of one image of the minibatch into the thread's workspace; returns
  // its squared error.
  float train_image(const float* x, Workspace& ws) const {
    forward(x, ws);
    const float scale = 2.0f / float(size_t(batch_) * ws.y.size());  // d loss / d y = scale (y - x)
    float error = 0;
    for (size_t j = 0; j < ws.y.size(); ++j) {
      const float e = ws.y[j] - x[j];
      error += e * e;
      ws.d_y[j] = scale * e;
    }
    const float* p = params_.data();
    float* g = ws.gradient.data();
    conv_backward(L_[4], p, ws.u4.data(), ws.d_y.data(), g, ws.d_u4.data());
    up_backward(L_[3].out, L_[3].height, L_[3].width, ws.d_u4.data(), ws.d_a4.data());
    relu_backward(ws.a4.data(), ws.d_a4.data(), ws.a4.size());
    conv_backward(L_[3], p, ws.u3.data(), ws.d_a4.data(), g, ws.d_u3.data());
    up_backward(L_[2].out, L_[2].height, L_[2].width, ws.d_u3.data(), ws.d_a3.data());
    relu_backward(ws.a3.data(), ws.d_a3.data(), ws.a3.size());
    conv_backward(L_[2], p, ws.p2.data(), ws.d_a3.data(), g, ws.d_p2.data());
    pool_backward(L_[1].out, L_[1].height, L_[1].width, ws.a2.data(), ws.d_p2.data(), ws.d_a2.data());
    relu_backward(ws.a2.data(), ws.d_a2.data(), ws.a2.size());
    conv_backward(L_[1], p, ws.p1.data(), ws.d_a2.data(), g, ws.d_p1.data());
    pool_backward(L_[0].out, L_[0].height, L_[0].width, ws.a1.data(), ws.d_p1.data(), ws.d_a1.data());
    relu_backward(ws.a1.data(), ws.d_a1.data(), ws.a1.size());
    conv_backward(L_[0], p, x, ws.d_a1.data(), g, nullptr);  // the image itself needs no gradient
    return error;
  }

  const Problem* p_ = nullptr;
  int batch_ = 0;
  long long t_ = 0;
  std::array<Conv, kLayers> L_;
  std::vector<float> params_, velocity_, gradient_, losses_;
  std::vector<Workspace> workspaces_;
};

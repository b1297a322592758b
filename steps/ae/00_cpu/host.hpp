class Cpu final : public Step {
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
    // One image's activations (and the gradients flowing back through them).
    auto plane = [](const Conv& c, int ch) { return size_t(ch) * c.height * c.width; };
    a1_.resize(plane(L_[0], L_[0].out)), p1_.resize(plane(L_[1], L_[1].in));
    a2_.resize(plane(L_[1], L_[1].out)), p2_.resize(plane(L_[2], L_[2].in));
    a3_.resize(plane(L_[2], L_[2].out)), u3_.resize(plane(L_[3], L_[3].in));
    a4_.resize(plane(L_[3], L_[3].out)), u4_.resize(plane(L_[4], L_[4].in));
    y_.resize(plane(L_[4], L_[4].out));
    d_y_.resize(y_.size()), d_u4_.resize(u4_.size()), d_a4_.resize(a4_.size()), d_u3_.resize(u3_.size());
    d_a3_.resize(a3_.size()), d_p2_.resize(p2_.size()), d_a2_.resize(a2_.size()), d_p1_.resize(p1_.size());
    d_a1_.resize(a1_.size());
  }

  void train(long long steps) override {
    const size_t image_size = p_->data->image_size();
    for (long long s = 0; s < steps; ++s, ++t_) {
      const float* images = p_->data->image(minibatch_start(t_, batch_, p_->images()));
      std::fill(gradient_.begin(), gradient_.end(), 0.0f);
      float error = 0;
      for (int b = 0; b < batch_; ++b) error += train_image(images + b * image_size);
      losses_.push_back(error / float(size_t(batch_) * image_size));
      const float lr = float(p_->lr), momentum = float(p_->momentum);
      for (size_t j = 0; j < params_.size(); ++j) {
        velocity_[j] = momentum * velocity_[j] + gradient_[j];
        params_[j] -= lr * velocity_[j];
      }
    }
  }

  void store(Trained& out) override {
    out.params = params_;
    out.gradient = gradient_;
    out.losses = losses_;
  }

  void reconstruct(int count, float* out) override {
    const size_t image_size = p_->data->image_size();
    for (int b = 0; b < count; ++b) {
      forward(p_->data->image(b));
      std::copy(y_.begin(), y_.end(), out + b * image_size);
    }
  }

 private:
  void forward(const float* x) {
    const float* p = params_.data();
    conv_forward(L_[0], p, x, a1_.data());
    relu(a1_.data(), a1_.size());
    pool_forward(L_[0].out, L_[0].height, L_[0].width, a1_.data(), p1_.data());
    conv_forward(L_[1], p, p1_.data(), a2_.data());
    relu(a2_.data(), a2_.size());
    pool_forward(L_[1].out, L_[1].height, L_[1].width, a2_.data(), p2_.data());
    conv_forward(L_[2], p, p2_.data(), a3_.data());
    relu(a3_.data(), a3_.size());
    up_forward(L_[2].out, L_[2].height, L_[2].width, a3_.data(), u3_.data());
    conv_forward(L_[3], p, u3_.data(), a4_.data());
    relu(a4_.data(), a4_.size());
    up_forward(L_[3].out, L_[3].height, L_[3].width, a4_.data(), u4_.data());
    conv_forward(L_[4], p, u4_.data(), y_.data());
  }

  // Forward and backward of one image of the minibatch; returns its squared error.
  float train_image(const float* x) {
    forward(x);
    const float scale = 2.0f / float(size_t(batch_) * y_.size());  // d loss / d y = scale (y - x)
    float error = 0;
    for (size_t j = 0; j < y_.size(); ++j) {
      const float e = y_[j] - x[j];
      error += e * e;
      d_y_[j] = scale * e;
    }
    const float* p = params_.data();
    float* g = gradient_.data();
    conv_backward(L_[4], p, u4_.data(), d_y_.data(), g, d_u4_.data());
    up_backward(L_[3].out, L_[3].height, L_[3].width, d_u4_.data(), d_a4_.data());
    relu_backward(a4_.data(), d_a4_.data(), a4_.size());
    conv_backward(L_[3], p, u3_.data(), d_a4_.data(), g, d_u3_.data());
    up_backward(L_[2].out, L_[2].height, L_[2].width, d_u3_.data(), d_a3_.data());
    relu_backward(a3_.data(), d_a3_.data(), a3_.size());
    conv_backward(L_[2], p, p2_.data(), d_a3_.data(), g, d_p2_.data());
    pool_backward(L_[1].out, L_[1].height, L_[1].width, a2_.data(), d_p2_.data(), d_a2_.data());
    relu_backward(a2_.data(), d_a2_.data(), a2_.size());
    conv_backward(L_[1], p, p1_.data(), d_a2_.data(), g, d_p1_.data());
    pool_backward(L_[0].out, L_[0].height, L_[0].width, a1_.data(), d_p1_.data(), d_a1_.data());
    relu_backward(a1_.data(), d_a1_.data(), a1_.size());
    conv_backward(L_[0], p, x, d_a1_.data(), g, nullptr);  // the image itself needs no gradient
    return error;
  }

  const Problem* p_ = nullptr;
  int batch_ = 0;
  long long t_ = 0;
  std::array<Conv, kLayers> L_;
  std::vector<float> params_, velocity_, gradient_, losses_;
  std::vector<float> a1_, p1_, a2_, p2_, a3_, u3_, a4_, u4_, y_;
  std::vector<float> d_y_, d_u4_, d_a4_, d_u3_, d_a3_, d_p2_, d_a2_, d_p1_, d_a1_;
};

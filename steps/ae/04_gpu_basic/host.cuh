// The training step of every GPU step (common/ae/gpu_training.cuh) with these convolutions and
// loss, elementwise.cuh's other layers (NCHW), and each activation's gradient in a buffer of its
// own.
class GpuBasic final : public ElementwiseLayers {
 public:
  explicit GpuBasic(int threads) : ElementwiseLayers(threads, Gradients::separate) {}

 private:
  void conv(int l, int n, const float* in, float* out, bool relu) override {
    const Conv& c = L_[l];
    launch(conv_forward, size_t(n) * c.out * c.pixels(), n, c.in, c.out, c.height, c.width, in,
           state_.params.data() + c.weight, state_.params.data() + c.bias, out);
    if (relu) relu_in_place(l, n, out);
  }

  void loss_gradient(const float* x, float* y, float* d_y, float* loss) override {
    const size_t outputs = size_t(batch_) * p_->data->image_size();
    CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof(float)));
    const float scale = 2.0f / float(outputs), mean = 1.0f / float(outputs);
    loss_gradient_atomic<<<unsigned((outputs + threads_ - 1) / threads_), threads_, threads_ * sizeof(float)>>>(
        outputs, scale, mean, y, x, d_y, loss);
    CUDA_CHECK_LAUNCH();
  }

  // The weight and bias gradients of conv l (whole batch), and the gradient of its input.
  void conv_backward(int l, const float* in, const float* d_out, float* d_in) override {
    const Conv& c = L_[l];
    const int n = batch_;
    launch(conv_weight_gradient, c.weight_count(), n, c.in, c.out, c.height, c.width, in, d_out,
           state_.gradient.data() + c.weight);
    launch(bias_gradient, size_t(c.out), n, c.out, int(c.pixels()), d_out, state_.gradient.data() + c.bias);
    if (d_in)
      launch(conv_input_gradient, size_t(n) * c.in * c.pixels(), n, c.in, c.out, c.height, c.width, d_out,
             state_.params.data() + c.weight, d_in);
  }
};

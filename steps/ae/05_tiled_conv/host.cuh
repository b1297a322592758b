// The training step of every GPU step (common/ae/gpu_training.cuh) with these convolutions and
// loss, elementwise.cuh's other layers (NCHW), and each activation's gradient in a buffer of its
// own.
class GpuTiledConv final : public ElementwiseLayers {
 public:
  explicit GpuTiledConv(int threads) : ElementwiseLayers(threads, Gradients::separate) {}

 private:
  void allocate_more(int) override {
    forward_weights_.resize(state_.params.size());
    backward_weights_.resize(state_.params.size());
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
      convolve(n, c.out, c.in, c.height, c.width, d_out, backward_weights_.data() + c.weight, nullptr, d_in);
  }

  core::DeviceArray<float> forward_weights_, backward_weights_;  // arrange_weights' orders, at each weight's offset
};

// ae 04_gpu_basic: the whole training step on the GPU, the plainest way that is correct. One
// thread per output element of every layer, the whole minibatch in each launch, every buffer
// on the device from load() to store(): a training step is a sequence of launches on one
// stream with no copy and no synchronization in between. A weight gradient's thread sums its
// element over every pixel of every image of the batch, so the batch's gradient is one sum,
// written once: nothing to zero, nothing overwritten, no atomics.
#include "ae/elementwise.cuh"

namespace ae {
namespace {

// out[b][o][y][x] = bias[o] + sum over i, kh, kw of weight[o][i][kh][kw] in[b][i][y+kh-1][x+kw-1]
// (zero outside the image). Consecutive threads take consecutive x: coalesced writes.
__global__ void conv_forward(int batch, int in_ch, int out_ch, int h, int w, const float* __restrict__ in,
                             const float* __restrict__ weight, const float* __restrict__ bias, float* __restrict__ out) {
  const size_t idx = global_index();
  if (idx >= size_t(batch) * out_ch * h * w) return;
  const int x = int(idx % w), y = int(idx / w % h), o = int(idx / (size_t(w) * h) % out_ch);
  const size_t b = idx / (size_t(w) * h * out_ch);
  const float* image = in + b * in_ch * h * w;
  const float* k = weight + size_t(o) * in_ch * 9;
  float sum = bias[o];
  for (int i = 0; i < in_ch; ++i)
    for (int kh = 0; kh < 3; ++kh) {
      const int iy = y + kh - 1;
      if (iy < 0 || iy >= h) continue;
      for (int kw = 0; kw < 3; ++kw) {
        const int ix = x + kw - 1;
        if (ix < 0 || ix >= w) continue;
        sum += k[(i * 3 + kh) * 3 + kw] * image[(size_t(i) * h + iy) * w + ix];
      }
    }
  out[idx] = sum;
}

// d_in[b][i][y][x] = sum over o, kh, kw of weight[o][i][kh][kw] d_out[b][o][y+1-kh][x+1-kw]:
// every output that read in[b][i][y][x], gathered by the thread that owns it.
__global__ void conv_input_gradient(int batch, int in_ch, int out_ch, int h, int w, const float* __restrict__ d_out,
                                    const float* __restrict__ weight, float* __restrict__ d_in) {
  const size_t idx = global_index();
  if (idx >= size_t(batch) * in_ch * h * w) return;
  const int x = int(idx % w), y = int(idx / w % h), i = int(idx / (size_t(w) * h) % in_ch);
  const size_t b = idx / (size_t(w) * h * in_ch);
  const float* d = d_out + b * out_ch * h * w;
  float sum = 0;
  for (int o = 0; o < out_ch; ++o)
    for (int kh = 0; kh < 3; ++kh) {
      const int oy = y + 1 - kh;
      if (oy < 0 || oy >= h) continue;
      for (int kw = 0; kw < 3; ++kw) {
        const int ox = x + 1 - kw;
        if (ox < 0 || ox >= w) continue;
        sum += weight[((size_t(o) * in_ch + i) * 3 + kh) * 3 + kw] * d[(size_t(o) * h + oy) * w + ox];
      }
    }
  d_in[idx] = sum;
}

// gradient[o][i][kh][kw] = sum over the batch's images b and pixels (y, x) of
// d_out[b][o][y][x] in[b][i][y+kh-1][x+kw-1]: the whole minibatch's sum, by one thread.
__global__ void conv_weight_gradient(int batch, int in_ch, int out_ch, int h, int w, const float* __restrict__ in,
                                     const float* __restrict__ d_out, float* __restrict__ gradient) {
  const size_t idx = global_index();
  if (idx >= size_t(out_ch) * in_ch * 9) return;
  const int kw = int(idx % 3), kh = int(idx / 3 % 3), i = int(idx / 9 % in_ch), o = int(idx / (9 * size_t(in_ch)));
  float sum = 0;
  for (int b = 0; b < batch; ++b) {
    const float* d = d_out + (size_t(b) * out_ch + o) * h * w;
    const float* image = in + (size_t(b) * in_ch + i) * h * w;
    for (int y = max(0, 1 - kh); y < min(h, h + 1 - kh); ++y)
      for (int x = max(0, 1 - kw); x < min(w, w + 1 - kw); ++x) sum += d[y * w + x] * image[(y + kh - 1) * w + x + kw - 1];
  }
  gradient[idx] = sum;
}

__global__ void bias_gradient(int batch, int out_ch, int pixels, const float* __restrict__ d_out, float* __restrict__ gradient) {
  const size_t o = global_index();
  if (o >= size_t(out_ch)) return;
  float sum = 0;
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < pixels; ++j) sum += d_out[(size_t(b) * out_ch + o) * pixels + j];
  gradient[o] = sum;
}

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

}  // namespace

StepInfo step_info() {
  return {"04_gpu_basic", "GPU: a thread per output element, the whole batch per launch", true, Accuracy::fp32,
          {{"threads", 256, 32, 1024, "Threads per block (a multiple of 32, a power of 2 for the loss reduction)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  return std::make_unique<GpuBasic>(int(threads));
}

}  // namespace ae

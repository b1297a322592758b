// ae 02_gpu_basic: the whole training step on the GPU, the plainest way that is correct. One
// thread per output element of every layer, the whole minibatch in each launch, every buffer
// on the device from load() to store(): a training step is a sequence of launches on one
// stream with no copy and no synchronization in between. A weight gradient's thread sums its
// element over every pixel of every image of the batch, so the batch's gradient is one sum,
// written once: nothing to zero, nothing overwritten, no atomics.
#include <algorithm>

#include "core/cuda_check.cuh"
#include "core/device_array.cuh"
#include "ae/elementwise.cuh"
#include "ae/step.hpp"
#include "ae/training_state.cuh"

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

// d_y = scale (y - x); the squared errors of a block are summed in shared memory and added to
// the step's loss with one atomic per block. (The later steps write block sums instead and add
// them in a fixed order: elementwise.cuh's loss_gradient.)
__global__ void loss_gradient_atomic(size_t n, float scale, float mean, const float* __restrict__ y,
                                     const float* __restrict__ x, float* __restrict__ d_y, float* __restrict__ loss) {
  extern __shared__ float partial[];
  const size_t idx = global_index();
  float e2 = 0;
  if (idx < n) {
    const float e = y[idx] - x[idx];
    d_y[idx] = scale * e;
    e2 = e * e;
  }
  partial[threadIdx.x] = e2;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(loss, partial[0] * mean);
}

class GpuBasic final : public Step {
 public:
  explicit GpuBasic(int threads) : threads_(threads) {}

  void load(const Problem& p, const std::vector<float>& initial, int batch) override {
    p_ = &p;
    batch_ = batch;
    L_ = layers(p.model);
    t_ = 0;
    data_.upload(p.data->pixels.data(), p.data->pixels.size());
    state_.load(initial, p.steps());  // the losses allocated here, not in the timed train()
    // Activations for a minibatch, or for the images reconstruct() is asked for.
    const size_t n = size_t(std::max(batch, 32));
    auto size = [n](const Conv& c, int ch) { return n * ch * c.pixels(); };
    a1_.resize(size(L_[0], L_[0].out)), p1_.resize(size(L_[1], L_[1].in));
    a2_.resize(size(L_[1], L_[1].out)), p2_.resize(size(L_[2], L_[2].in));
    a3_.resize(size(L_[2], L_[2].out)), u3_.resize(size(L_[3], L_[3].in));
    a4_.resize(size(L_[3], L_[3].out)), u4_.resize(size(L_[4], L_[4].in));
    y_.resize(size(L_[4], L_[4].out));
    d_y_.resize(y_.size()), d_u4_.resize(u4_.size()), d_a4_.resize(a4_.size()), d_u3_.resize(u3_.size());
    d_a3_.resize(a3_.size()), d_p2_.resize(p2_.size()), d_a2_.resize(a2_.size()), d_p1_.resize(p1_.size());
    d_a1_.resize(a1_.size());
  }

  void train(long long steps) override {
    state_.reserve(t_ + steps);
    const size_t image_size = p_->data->image_size();
    for (long long s = 0; s < steps; ++s, ++t_) {
      const float* x = data_.data() + minibatch_start(t_, batch_, p_->images()) * image_size;
      forward(x, batch_);
      backward(x, state_.losses() + t_);
      launch(sgd, state_.params.size(), state_.params.size(), float(p_->lr), float(p_->momentum), state_.gradient.data(),
             state_.velocity.data(), state_.params.data());
    }
  }

  void store(Trained& out) override {
    state_.store(out, t_);
  }

  void reconstruct(int count, float* out) override {
    forward(data_.data(), count);
    CUDA_CHECK(cudaMemcpy(out, y_.data(), size_t(count) * p_->data->image_size() * sizeof(float), cudaMemcpyDeviceToHost));
  }

  void describe(nlohmann::json& params) const override { params["threads"] = threads_; }

 private:
  template <class Kernel, class... Args>
  void launch(Kernel kernel, size_t n, Args... args) {
    kernel<<<unsigned((n + threads_ - 1) / threads_), threads_>>>(args...);
    CUDA_CHECK_LAUNCH();
  }

  void conv(const Conv& c, int n, const float* in, float* out) {
    launch(conv_forward, size_t(n) * c.out * c.pixels(), n, c.in, c.out, c.height, c.width, in,
           state_.params.data() + c.weight, state_.params.data() + c.bias, out);
  }

  void forward(const float* x, int n) {
    conv(L_[0], n, x, a1_.data());
    launch(relu, size_t(n) * L_[0].out * L_[0].pixels(), size_t(n) * L_[0].out * L_[0].pixels(), a1_.data());
    launch(pool_forward, size_t(n) * L_[1].in * L_[1].pixels(), size_t(n) * L_[0].out, L_[0].height, L_[0].width,
           a1_.data(), p1_.data());
    conv(L_[1], n, p1_.data(), a2_.data());
    launch(relu, size_t(n) * L_[1].out * L_[1].pixels(), size_t(n) * L_[1].out * L_[1].pixels(), a2_.data());
    launch(pool_forward, size_t(n) * L_[2].in * L_[2].pixels(), size_t(n) * L_[1].out, L_[1].height, L_[1].width,
           a2_.data(), p2_.data());
    conv(L_[2], n, p2_.data(), a3_.data());
    launch(relu, size_t(n) * L_[2].out * L_[2].pixels(), size_t(n) * L_[2].out * L_[2].pixels(), a3_.data());
    launch(up_forward, size_t(n) * L_[3].in * L_[3].pixels(), size_t(n) * L_[2].out, L_[2].height, L_[2].width,
           a3_.data(), u3_.data());
    conv(L_[3], n, u3_.data(), a4_.data());
    launch(relu, size_t(n) * L_[3].out * L_[3].pixels(), size_t(n) * L_[3].out * L_[3].pixels(), a4_.data());
    launch(up_forward, size_t(n) * L_[4].in * L_[4].pixels(), size_t(n) * L_[3].out, L_[3].height, L_[3].width,
           a4_.data(), u4_.data());
    conv(L_[4], n, u4_.data(), y_.data());
  }

  // The weight and bias gradients of conv c (whole batch), and the gradient of its input.
  void conv_backward(const Conv& c, const float* in, const float* d_out, float* d_in) {
    const int n = batch_;
    launch(conv_weight_gradient, c.weight_count(), n, c.in, c.out, c.height, c.width, in, d_out,
           state_.gradient.data() + c.weight);
    launch(bias_gradient, size_t(c.out), n, c.out, int(c.pixels()), d_out, state_.gradient.data() + c.bias);
    if (d_in)
      launch(conv_input_gradient, size_t(n) * c.in * c.pixels(), n, c.in, c.out, c.height, c.width, d_out,
             state_.params.data() + c.weight, d_in);
  }

  void backward(const float* x, float* loss) {
    const size_t n = size_t(batch_), outputs = n * p_->data->image_size();
    CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof(float)));
    const float scale = 2.0f / float(outputs), mean = 1.0f / float(outputs);
    loss_gradient_atomic<<<unsigned((outputs + threads_ - 1) / threads_), threads_, threads_ * sizeof(float)>>>(
        outputs, scale, mean, y_.data(), x, d_y_.data(), loss);
    CUDA_CHECK_LAUNCH();
    conv_backward(L_[4], u4_.data(), d_y_.data(), d_u4_.data());
    launch(up_backward, n * L_[3].out * L_[3].pixels(), n * L_[3].out, L_[3].height, L_[3].width, d_u4_.data(), d_a4_.data());
    launch(relu_backward, n * L_[3].out * L_[3].pixels(), n * L_[3].out * L_[3].pixels(), a4_.data(), d_a4_.data());
    conv_backward(L_[3], u3_.data(), d_a4_.data(), d_u3_.data());
    launch(up_backward, n * L_[2].out * L_[2].pixels(), n * L_[2].out, L_[2].height, L_[2].width, d_u3_.data(), d_a3_.data());
    launch(relu_backward, n * L_[2].out * L_[2].pixels(), n * L_[2].out * L_[2].pixels(), a3_.data(), d_a3_.data());
    conv_backward(L_[2], p2_.data(), d_a3_.data(), d_p2_.data());
    launch(pool_backward, n * L_[1].out * L_[1].pixels(), n * L_[1].out, L_[1].height, L_[1].width, a2_.data(),
           d_p2_.data(), d_a2_.data());
    launch(relu_backward, n * L_[1].out * L_[1].pixels(), n * L_[1].out * L_[1].pixels(), a2_.data(), d_a2_.data());
    conv_backward(L_[1], p1_.data(), d_a2_.data(), d_p1_.data());
    launch(pool_backward, n * L_[0].out * L_[0].pixels(), n * L_[0].out, L_[0].height, L_[0].width, a1_.data(),
           d_p1_.data(), d_a1_.data());
    launch(relu_backward, n * L_[0].out * L_[0].pixels(), n * L_[0].out * L_[0].pixels(), a1_.data(), d_a1_.data());
    conv_backward(L_[0], x, d_a1_.data(), nullptr);  // the image needs no gradient
  }

  int threads_;
  const Problem* p_ = nullptr;
  int batch_ = 0;
  long long t_ = 0;
  std::array<Conv, kLayers> L_;
  core::DeviceArray<float> data_;
  TrainingState state_;  // parameters, velocity, gradient, losses
  core::DeviceArray<float> a1_, p1_, a2_, p2_, a3_, u3_, a4_, u4_, y_;
  core::DeviceArray<float> d_y_, d_u4_, d_a4_, d_u3_, d_a3_, d_p2_, d_a2_, d_p1_, d_a1_;
};

}  // namespace

StepInfo step_info() {
  return {"02_gpu_basic", "GPU: a thread per output element, the whole batch per launch", true, Accuracy::fp32,
          {{"threads", 256, 32, 1024, "Threads per block (a multiple of 32, a power of 2 for the loss reduction)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  return std::make_unique<GpuBasic>(int(threads));
}

}  // namespace ae

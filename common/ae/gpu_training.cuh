// The training step of the GPU steps, written once: what to allocate, which layer runs when,
// and SGD. A step supplies only its kernels, as the layer operations LayeredTraining calls
// (conv, pool, upsample, their gradients, the loss), so that its source holds what it changes.
//
//   GpuStep          the images and the training state on the device (in the step's layout),
//                    the launches, store() and reconstruct(): every GPU step (the fused branch,
//                    16-20, whose training step is its own sequence of fused kernels, derives from it)
//   LayeredTraining  the activations, the gradient buffers and the sequence of one training
//                    step, layer by layer: forward, loss, backward, update (04-15)
//
// Header-only, in an anonymous namespace as elementwise.cuh: each step program is one
// translation unit, with its own copy.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/device_array.cuh"
#include "ae/step.hpp"
#include "ae/training_state.cuh"

namespace ae {
namespace {

__device__ __forceinline__ size_t global_index() { return size_t(blockIdx.x) * blockDim.x + threadIdx.x; }

// The block's dynamic shared memory (its size is given at launch), 16-byte aligned for float4
// reads and cp.async.
__device__ __forceinline__ float* shared_floats() {
  extern __shared__ float4 shared_storage[];
  return reinterpret_cast<float*>(shared_storage);
}

// SGD with momentum as PyTorch defines it: v = momentum v + g; w -= lr v.
__global__ void sgd(size_t n, float lr, float momentum, const float* __restrict__ gradient, float* __restrict__ velocity,
                    float* __restrict__ params) {
  const size_t idx = global_index();
  if (idx >= n) return;
  velocity[idx] = momentum * velocity[idx] + gradient[idx];
  params[idx] -= lr * velocity[idx];
}

// How a step stores images and activations on the device: NCHW (a channel's plane
// contiguous), or NHWC (channels last: a pixel's channels contiguous), the channels padded
// with zeros to a multiple of 4 (16 bytes).
enum class Layout { nchw, nhwc };

class GpuStep : public Step {
 public:
  GpuStep(int threads, Layout layout) : threads_(threads), layout_(layout) {}

  void load(const Problem& p, const std::vector<float>& initial, int batch) override {
    p_ = &p;
    batch_ = batch;
    L_ = layers(p.model);
    t_ = 0;
    for (int l = 0; l < kLayers; ++l) in_ch_[l] = stored(L_[l].in), out_ch_[l] = stored(L_[l].out);
    image_ch_ = stored(p.data->channels);
    // The images in the step's layout, converted once, here.
    const ImageSet& set = *p.data;
    if (layout_ == Layout::nchw) {
      data_.upload(set.pixels.data(), set.pixels.size());
    } else {
      const size_t pixels = size_t(set.height) * set.width;
      std::vector<float> nhwc(size_t(set.count) * pixels * image_ch_, 0.0f);
      for (size_t i = 0; i < size_t(set.count); ++i)
        for (int c = 0; c < set.channels; ++c)
          for (size_t q = 0; q < pixels; ++q)
            nhwc[(i * pixels + q) * image_ch_ + c] = set.pixels[(i * set.channels + c) * pixels + q];
      data_.upload(nhwc.data(), nhwc.size());
    }
    state_.load(initial, p.steps());  // the losses allocated here, not in the timed train()
    capacity_ = std::max(batch, 32);  // images per pass: a minibatch, or as many as reconstruct() does at once
    allocate(batch);
  }

  void store(Trained& out) override { state_.store(out, t_); }

  // The reconstructions, capacity_ images at a time, back to NCHW on the host.
  void reconstruct(int count, float* out) override {
    const ImageSet& set = *p_->data;
    const size_t pixels = size_t(set.height) * set.width, floats = pixels * image_ch_;
    std::vector<float> nhwc(layout_ == Layout::nhwc ? size_t(capacity_) * floats : 0);
    for (int first = 0; first < count; first += capacity_) {
      const int n = std::min(capacity_, count - first);
      forward(data_.data() + size_t(first) * floats, n);
      float* to = layout_ == Layout::nchw ? out + size_t(first) * floats : nhwc.data();
      CUDA_CHECK(cudaMemcpy(to, reconstruction(), size_t(n) * floats * sizeof(float), cudaMemcpyDeviceToHost));
      if (layout_ == Layout::nhwc)
        for (size_t i = 0; i < size_t(n); ++i)
          for (int c = 0; c < set.channels; ++c)
            for (size_t q = 0; q < pixels; ++q)
              out[((size_t(first) + i) * set.channels + c) * pixels + q] = nhwc[(i * pixels + q) * image_ch_ + c];
    }
  }

  void describe(core::Fields& params) const override { params.set("threads", threads_); }

 protected:
  // The step's own buffers, once the images and the state are on the device (load()).
  virtual void allocate(int batch) = 0;
  // The model's output for n images from x (stored as the images), into reconstruction().
  virtual void forward(const float* x, int n) = 0;
  virtual float* reconstruction() = 0;

  // Channels as stored: padded to a multiple of 4 in NHWC, so that 4 channels of a pixel are
  // one 16-byte copy.
  int stored(int channels) const { return layout_ == Layout::nhwc ? (channels + 3) / 4 * 4 : channels; }
  // Floats of one image as stored.
  size_t image_floats() const { return L_[0].pixels() * image_ch_; }
  // The first image of training step t's minibatch.
  const float* minibatch(long long t) const {
    return data_.data() + minibatch_start(t, batch_, p_->images()) * image_floats();
  }

  template <class Kernel, class... Args>
  void launch_grid(Kernel kernel, dim3 grid, dim3 block, size_t shared, Args... args) {
    kernel<<<grid, block, shared, stream_>>>(args...);
    CUDA_CHECK_LAUNCH();
  }
  // One thread per element, --threads per block.
  template <class Kernel, class... Args>
  void launch(Kernel kernel, size_t n, Args... args) {
    launch_grid(kernel, dim3(unsigned((n + threads_ - 1) / threads_)), dim3(threads_), 0, args...);
  }

  int threads_;
  Layout layout_;
  cudaStream_t stream_ = nullptr;  // the kernels' stream: the legacy default stream unless a step makes its own
  const Problem* p_ = nullptr;
  int batch_ = 0, capacity_ = 0, image_ch_ = 0;
  long long t_ = 0;  // training steps since load()
  std::array<Conv, kLayers> L_;
  std::array<int, kLayers> in_ch_{}, out_ch_{};  // channel counts as stored
  core::DeviceArray<float> data_;  // the images
  TrainingState state_;            // parameters, velocity, gradient, losses
};

// Where the backward pass keeps the gradients of the activations: each in a buffer of its
// own, or two buffers used in turn (each gradient is read only to make the next one and its
// layer's weight gradient), the first of which holds the reconstruction y until the loss
// overwrites it with d_y.
enum class Gradients { separate, in_turn };

class LayeredTraining : public GpuStep {
 public:
  LayeredTraining(int threads, Layout layout, Gradients gradients) : GpuStep(threads, layout), gradients_(gradients) {}

  void train(long long steps) override {
    state_.reserve(t_ + steps);
    for (long long s = 0; s < steps; ++s, ++t_) {
      const float* x = minibatch(t_);
      forward(x, batch_);
      backward(x, state_.losses() + t_);
      launch(sgd, state_.params.size(), state_.params.size(), float(p_->lr), float(p_->momentum), state_.gradient.data(),
             state_.velocity.data(), state_.params.data());
    }
  }

 protected:
  // ---- The layer operations a step supplies (l: the layer, 0 .. 4; n: images) ----

  // Layer l's convolution with its bias, then ReLU where `relu` (every layer but the last).
  virtual void conv(int l, int n, const float* in, float* out, bool relu) = 0;
  // 2x2 max pooling of layer l's output a (l = 0, 1), and x2 nearest upsampling of it (l = 2, 3).
  virtual void pool(int l, int n, const float* a, float* pooled) = 0;
  virtual void upsample(int l, int n, const float* a, float* up) = 0;
  // d_y = 2 (y - x) / outputs and the loss, the mean of (y - x)^2, into *loss. With
  // Gradients::in_turn d_y is y (written over it).
  virtual void loss_gradient(const float* x, float* y, float* d_y, float* loss) = 0;
  // Layer l's weight and bias gradients over the minibatch, and the gradient of its input
  // unless d_in is null (conv1: the image needs none).
  virtual void conv_backward(int l, const float* in, const float* d_out, float* d_in) = 0;
  // The gradient of layer l's ReLU output a from that of its pooling (pooled: the pooled
  // output) or of its upsampling, and through the ReLU: zero where a is 0.
  virtual void pool_backward(int l, const float* a, const float* pooled, const float* d_pooled, float* d_a) = 0;
  virtual void upsample_backward(int l, const float* d_up, const float* a, float* d_a) = 0;
  // Before every forward pass (training or reconstruct()), for n images.
  virtual void prepare(int n) { (void)n; }
  // The step's buffers besides the activations (load(), after them).
  virtual void allocate_more(int batch) { (void)batch; }

  // The activations of capacity_ images, and the gradient buffers of a minibatch.
  void allocate(int batch) final {
    const size_t n = size_t(capacity_);
    auto size = [n](const Conv& c, int ch) { return n * ch * c.pixels(); };
    a1_.resize(size(L_[0], out_ch_[0])), p1_.resize(size(L_[1], in_ch_[1]));
    a2_.resize(size(L_[1], out_ch_[1])), p2_.resize(size(L_[2], in_ch_[2]));
    a3_.resize(size(L_[2], out_ch_[2])), u3_.resize(size(L_[3], in_ch_[3]));
    a4_.resize(size(L_[3], out_ch_[3])), u4_.resize(size(L_[4], in_ch_[4]));
    if (gradients_ == Gradients::in_turn) {
      size_t largest = 0;
      for (int l = 0; l < kLayers; ++l) largest = std::max({largest, size(L_[l], in_ch_[l]), size(L_[l], out_ch_[l])});
      buffers_[0].resize(largest), buffers_[1].resize(largest);
    } else {
      // y, then d(0) .. d(8): the output and the input of conv5, conv4, ... down to conv1's output.
      buffers_[0].resize(size(L_[4], out_ch_[4]));
      for (int k = 0; k < 9; ++k) {
        const int l = 4 - k / 2;
        buffers_[k + 1].resize(k % 2 ? size(L_[l], in_ch_[l]) : size(L_[l], out_ch_[l]));
      }
    }
    allocate_more(batch);
  }

  void forward(const float* x, int n) override {
    prepare(n);
    conv(0, n, x, a1_.data(), true);
    pool(0, n, a1_.data(), p1_.data());
    conv(1, n, p1_.data(), a2_.data(), true);
    pool(1, n, a2_.data(), p2_.data());
    conv(2, n, p2_.data(), a3_.data(), true);
    upsample(2, n, a3_.data(), u3_.data());
    conv(3, n, u3_.data(), a4_.data(), true);
    upsample(3, n, a4_.data(), u4_.data());
    conv(4, n, u4_.data(), reconstruction(), false);
  }

  float* reconstruction() override { return buffers_[0].data(); }

  // The gradient of the k-th activation back from the loss: d_y, d_u4, d_a4, d_u3, d_a3, d_p2,
  // d_a2, d_p1, d_a1 for k = 0 .. 8.
  float* d(int k) { return gradients_ == Gradients::in_turn ? buffers_[k % 2].data() : buffers_[k + 1].data(); }

  void backward(const float* x, float* loss) {
    loss_gradient(x, reconstruction(), d(0), loss);
    conv_backward(4, u4_.data(), d(0), d(1));
    upsample_backward(3, d(1), a4_.data(), d(2));
    conv_backward(3, u3_.data(), d(2), d(3));
    upsample_backward(2, d(3), a3_.data(), d(4));
    conv_backward(2, p2_.data(), d(4), d(5));
    pool_backward(1, a2_.data(), p2_.data(), d(5), d(6));
    conv_backward(1, p1_.data(), d(6), d(7));
    pool_backward(0, a1_.data(), p1_.data(), d(7), d(8));
    conv_backward(0, x, d(8), nullptr);  // the image needs no gradient
  }

  Gradients gradients_;
  core::DeviceArray<float> a1_, p1_, a2_, p2_, a3_, u3_, a4_, u4_;  // conv outputs (after ReLU), pooled, upsampled
  std::array<core::DeviceArray<float>, 10> buffers_;  // the reconstruction and the gradients (d()): 2 used in turn, or 10
};

}  // namespace
}  // namespace ae

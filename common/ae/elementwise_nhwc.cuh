// The element-wise kernels of the NHWC GPU steps (08_nhwc to 14_bf16): max pooling and
// nearest upsampling with their gradients (the ReLU's mask applied where the gradient passes
// back), the loss's gradient with the block's squared errors, and the sum of those partial sums;
// and the layer operations they make (NhwcLayers). Those steps differ in their convolutions, not
// in these: one definition here keeps them the same kernels with the same launches, so that each
// step's source holds only what it changes. 08 brought them with the NHWC layout; the NCHW steps
// have theirs in elementwise.cuh.
//
// Everything is in an anonymous namespace: each step's translation unit compiles its own copy,
// with no separate compilation of device code.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "ae/gpu_training.cuh"

namespace ae {
namespace {

// A thread per 4 channels of a pixel (one float4).

// 2x2 max pooling of images x h x w x ch (ch % 4 == 0); q counts float4s of the output.
__global__ void pool_forward(size_t quads, int h, int w, int ch, const float* __restrict__ in, float* __restrict__ out) {
  const size_t q = global_index();
  if (q >= quads) return;
  const int groups = ch / 4, c = int(q % groups) * 4;
  const size_t pixel = q / groups;
  const int x = int(pixel % (w / 2)), y = int(pixel / (w / 2) % (h / 2));
  const size_t image = pixel / (size_t(w / 2) * (h / 2));
  const float* at = in + ((image * h + 2 * y) * w + 2 * x) * ch + c;
  float4 best = *reinterpret_cast<const float4*>(at);
  for (int d = 1; d < 4; ++d) {  // row-major order: a later maximum must be strictly larger
    const float4 v = *reinterpret_cast<const float4*>(at + (d / 2 * w + d % 2) * size_t(ch));
    best = make_float4(fmaxf(best.x, v.x), fmaxf(best.y, v.y), fmaxf(best.z, v.z), fmaxf(best.w, v.w));
  }
  reinterpret_cast<float4*>(out)[q] = best;
}

// The gradient through ReLU and pooling: a window's gradient goes to its first maximum in
// row-major order (as the reference and PyTorch), and is zero where the ReLU was off (its
// output a = 0). A thread per float4 of the pooled gradient writes all four window positions.
__global__ void pool_backward_relu(size_t quads, int h, int w, int ch, const float* __restrict__ a,
                                   const float* __restrict__ d_out, float* __restrict__ d_a) {
  const size_t q = global_index();
  if (q >= quads) return;
  const int groups = ch / 4, c = int(q % groups) * 4;
  const size_t pixel = q / groups;
  const int x = int(pixel % (w / 2)), y = int(pixel / (w / 2) % (h / 2));
  const size_t image = pixel / (size_t(w / 2) * (h / 2));
  const size_t at = ((image * h + 2 * y) * w + 2 * x) * ch + c;
  float v[4][4];  // [window position][channel]
#pragma unroll
  for (int d = 0; d < 4; ++d) {
    const float4 f = *reinterpret_cast<const float4*>(a + at + (d / 2 * w + d % 2) * size_t(ch));
    v[d][0] = f.x, v[d][1] = f.y, v[d][2] = f.z, v[d][3] = f.w;
  }
  const float4 g4 = reinterpret_cast<const float4*>(d_out)[q];
  const float g[4] = {g4.x, g4.y, g4.z, g4.w};
  float r[4][4];  // the gradient of each window position and channel
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    int best = 0;
    float most = v[0][j];
#pragma unroll
    for (int d = 1; d < 4; ++d)
      if (v[d][j] > most) most = v[d][j], best = d;
#pragma unroll
    for (int d = 0; d < 4; ++d) r[d][j] = best == d && v[d][j] > 0 ? g[j] : 0.0f;
  }
#pragma unroll
  for (int d = 0; d < 4; ++d)
    *reinterpret_cast<float4*>(d_a + at + (d / 2 * w + d % 2) * size_t(ch)) = make_float4(r[d][0], r[d][1], r[d][2], r[d][3]);
}

// Nearest-neighbour x2 upsampling of images x h x w x ch; q counts float4s of the output.
__global__ void up_forward(size_t quads, int h, int w, int ch, const float* __restrict__ in, float* __restrict__ out) {
  const size_t q = global_index();
  if (q >= quads) return;
  const int groups = ch / 4, c = int(q % groups) * 4;
  const size_t pixel = q / groups;
  const int x = int(pixel % (2 * w)), y = int(pixel / (2 * w) % (2 * h));
  const size_t image = pixel / (size_t(4) * h * w);
  reinterpret_cast<float4*>(out)[q] = *reinterpret_cast<const float4*>(in + ((image * h + y / 2) * w + x / 2) * ch + c);
}

// Its adjoint (the sum of each 2x2 block of d_up), through the ReLU whose output a was
// upsampled: zero where a = 0. q counts float4s of the h x w gradient.
__global__ void up_backward_relu(size_t quads, int h, int w, int ch, const float* __restrict__ d_up,
                                 const float* __restrict__ a, float* __restrict__ d_a) {
  const size_t q = global_index();
  if (q >= quads) return;
  const int groups = ch / 4, c = int(q % groups) * 4;
  const size_t pixel = q / groups;
  const int x = int(pixel % w), y = int(pixel / w % h);
  const size_t image = pixel / (size_t(w) * h);
  const float* d = d_up + ((image * 2 * h + 2 * y) * 2 * w + 2 * x) * ch + c;
  const size_t row = size_t(2) * w * ch;
  const float4 d0 = *reinterpret_cast<const float4*>(d), d1 = *reinterpret_cast<const float4*>(d + ch);
  const float4 d2 = *reinterpret_cast<const float4*>(d + row), d3 = *reinterpret_cast<const float4*>(d + row + ch);
  const float4 av = reinterpret_cast<const float4*>(a)[q];
  reinterpret_cast<float4*>(d_a)[q] = make_float4(av.x > 0 ? d0.x + d1.x + d2.x + d3.x : 0.0f,
                                                  av.y > 0 ? d0.y + d1.y + d2.y + d3.y : 0.0f,
                                                  av.z > 0 ? d0.z + d1.z + d2.z + d3.z : 0.0f,
                                                  av.w > 0 ? d0.w + d1.w + d2.w + d3.w : 0.0f);
}

// d_y = scale (y - x) over the real channels (the padding channel's gradient is 0), written
// over y; the squared errors of a block, times `mean`, go to partial[blockIdx.x] and
// sum_partials adds them into the step's loss. n counts floats of y (channel stride ch).
__global__ void loss_gradient(size_t n, int channels, int ch, float scale, float mean, float* y_then_d_y,
                              const float* __restrict__ x, float* __restrict__ partial) {
  float* squares = shared_floats();
  const size_t idx = global_index();
  float e2 = 0;
  if (idx < n) {
    const float e = int(idx % ch) < channels ? y_then_d_y[idx] - x[idx] : 0.0f;
    y_then_d_y[idx] = scale * e;
    e2 = e * e;
  }
  squares[threadIdx.x] = e2;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) squares[threadIdx.x] += squares[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = squares[0] * mean;
}

constexpr int kSplitLanes = 8;  // threads that add one element's partial sums

// total[j] = sum over s of partial[s][j] (07's kernel; 08 adds its weight gradients' splits
// with it too).
__global__ void sum_partials(size_t count, int splits, const float* __restrict__ partial, float* __restrict__ total) {
  float* lanes = shared_floats();  // [kSplitLanes][32]
  const size_t j = size_t(blockIdx.x) * 32 + threadIdx.x;
  float sum = 0;
  if (j < count)
    for (int s = threadIdx.y; s < splits; s += kSplitLanes) sum += partial[size_t(s) * count + j];
  lanes[threadIdx.y * 32 + threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && j < count) {
    float t = 0;
    for (int l = 0; l < kSplitLanes; ++l) t += lanes[l * 32 + threadIdx.x];
    total[j] = t;
  }
}

// The layer operations of the NHWC steps besides their convolutions: pooling and upsampling
// (ReLU's gradient applied as they pass the gradient back: the convolutions apply ReLU itself
// as they store), and the loss as block sums added by sum_partials. The channels are the
// stored ones (out_ch_: padded to a multiple of 4). The activations' gradients live in two
// buffers used in turn (07's). partials_ holds the loss's block sums; a step makes it as large
// as its own partial sums need (allocate_more).
class NhwcLayers : public LayeredTraining {
 public:
  explicit NhwcLayers(int threads) : LayeredTraining(threads, Layout::nhwc, Gradients::in_turn) {}

 protected:
  void pool(int l, int n, const float* a, float* pooled) override {
    const Conv& c = L_[l];
    launch(pool_forward, size_t(n) * c.pixels() / 4 * out_ch_[l] / 4, size_t(n) * c.pixels() / 4 * out_ch_[l] / 4,
           c.height, c.width, out_ch_[l], a, pooled);
  }
  void upsample(int l, int n, const float* a, float* up) override {
    const Conv& c = L_[l];
    const size_t quads = size_t(n) * c.pixels() * 4 * out_ch_[l] / 4;
    launch(up_forward, quads, quads, c.height, c.width, out_ch_[l], a, up);
  }

  void loss_gradient(const float* x, float*, float* d_y, float* loss) override {
    const size_t n = size_t(batch_);
    const size_t outputs = n * p_->data->image_size(), stored = n * L_[4].pixels() * image_ch_;
    const float scale = 2.0f / float(outputs), mean = 1.0f / float(outputs);
    const unsigned blocks = unsigned((stored + threads_ - 1) / threads_);
    launch_grid(ae::loss_gradient, dim3(blocks), dim3(threads_), threads_ * sizeof(float), stored, p_->data->channels,
                image_ch_, scale, mean, d_y, x, partials_.data());
    launch_grid(sum_partials, dim3(1), dim3(32, kSplitLanes), kSplitLanes * 32 * sizeof(float), size_t(1), int(blocks),
                partials_.data(), loss);
  }
  // The loss's block sums of a minibatch: what partials_ must hold at least.
  size_t loss_partials(int batch) const {
    return (size_t(batch) * L_[4].pixels() * image_ch_ + threads_ - 1) / threads_;
  }

  void pool_backward(int l, const float* a, const float*, const float* d_pooled, float* d_a) override {
    const size_t quads = size_t(batch_) * L_[l].pixels() / 4 * out_ch_[l] / 4;
    launch(pool_backward_relu, quads, quads, L_[l].height, L_[l].width, out_ch_[l], a, d_pooled, d_a);
  }
  void upsample_backward(int l, const float* d_up, const float* a, float* d_a) override {
    const size_t quads = size_t(batch_) * L_[l].pixels() * out_ch_[l] / 4;
    launch(up_backward_relu, quads, quads, L_[l].height, L_[l].width, out_ch_[l], d_up, a, d_a);
  }

  core::DeviceArray<float> partials_;
};

}  // namespace
}  // namespace ae

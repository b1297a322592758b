// The element-wise kernels of the NCHW GPU steps (04_gpu_basic to 07_loss_block_sums, 15_cudnn): max
// pooling and nearest upsampling with their gradients, ReLU and its gradient, and the loss's
// gradient (SGD is the driver's: gpu_training.cuh), and the layer operations they make
// (ElementwiseLayers). Those steps differ in their convolutions,
// not in these: one definition here keeps them the same kernels, with the same arithmetic and the same launches, so that
// the steps' sources hold only what each one changes. (The fused branch folds this work into
// its convolutions: 16 keeps up_forward, up_backward and relu_backward, 17 up_forward, 18-20 none;
// 08_nhwc to 14_bf16 keep NHWC: elementwise_nhwc.cuh.)
//
// Everything is in an anonymous namespace: each step's translation unit compiles its own
// copy, with no separate compilation of device code. One thread per element: the steps
// launch them on a 1-D grid, --threads per block.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "ae/gpu_training.cuh"

namespace ae {
namespace {

// v = max(v, 0) in place, after a convolution (15 has cuDNN's instead).
__global__ void relu(size_t n, float* v) {
  const size_t idx = global_index();
  if (idx < n) v[idx] = fmaxf(v[idx], 0.0f);
}

// ReLU's gradient in place: zero where the unit was off (its output is 0 exactly when its
// input was <= 0), so the output a serves, and the input need not be kept.
__global__ void relu_backward(size_t n, const float* __restrict__ a, float* __restrict__ d) {
  const size_t idx = global_index();
  if (idx < n && !(a[idx] > 0)) d[idx] = 0;
}

// The input of 2x2 max pooling that output (plane, y, x) takes: the first maximum in row-major
// order, as the reference and PyTorch pick among equal values.
__device__ size_t pool_source(const float* in, size_t plane, int y, int x, int h, int w) {
  size_t best = (plane * h + 2 * y) * w + 2 * x;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const size_t j = (plane * h + 2 * y + dy) * w + 2 * x + dx;
      if (in[j] > in[best]) best = j;
    }
  return best;
}

// 2x2 max pooling, one thread per output: planes = batch x channels; (h, w) is the input's size.
__global__ void pool_forward(size_t planes, int h, int w, const float* __restrict__ in, float* __restrict__ out) {
  const size_t idx = global_index();
  if (idx >= planes * (h / 2) * (w / 2)) return;
  const int x = int(idx % (w / 2)), y = int(idx / (w / 2) % (h / 2));
  out[idx] = in[pool_source(in, idx / (size_t(w / 2) * (h / 2)), y, x, h, w)];
}

// Max pooling's gradient, one thread per input element: the gradient of its window's output if
// it was the maximum, else 0 (every element written: nothing to zero first).
__global__ void pool_backward(size_t planes, int h, int w, const float* __restrict__ in, const float* __restrict__ d_out,
                              float* __restrict__ d_in) {
  const size_t idx = global_index();
  if (idx >= planes * h * w) return;
  const int x = int(idx % w), y = int(idx / w % h);
  const size_t plane = idx / (size_t(w) * h);
  const size_t out = (plane * (h / 2) + y / 2) * (w / 2) + x / 2;
  d_in[idx] = pool_source(in, plane, y / 2, x / 2, h, w) == idx ? d_out[out] : 0.0f;
}

// Nearest-neighbour x2 upsampling of (planes, h, w), one thread per output.
__global__ void up_forward(size_t planes, int h, int w, const float* __restrict__ in, float* __restrict__ out) {
  const size_t idx = global_index();
  if (idx >= planes * 4 * h * w) return;
  const int x = int(idx % (2 * w)), y = int(idx / (2 * w) % (2 * h));
  const size_t plane = idx / (size_t(4) * h * w);
  out[idx] = in[(plane * h + y / 2) * w + x / 2];
}

// Upsampling's gradient (its adjoint), one thread per input: the sum of its 2x2 block of d_out.
__global__ void up_backward(size_t planes, int h, int w, const float* __restrict__ d_out, float* __restrict__ d_in) {
  const size_t idx = global_index();
  if (idx >= planes * h * w) return;
  const int x = int(idx % w), y = int(idx / w % h);
  const size_t plane = idx / (size_t(w) * h);
  const float* d = d_out + (plane * 2 * h + 2 * y) * 2 * w + 2 * x;
  d_in[idx] = d[0] + d[1] + d[2 * w] + d[2 * w + 1];
}

// 04's and 05's loss: d_y = scale (y - x); the squared errors of a block are summed in shared
// memory and added to the step's loss, zeroed first, with one atomic per block: the order of
// the additions, and so the last bits of the loss, vary from run to run. (07 on write block sums
// and add them in a fixed order: loss_gradient below.)
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

// The loss's gradient d_y = scale (y - x), written over y (nothing reads the reconstruction
// after the loss); the squared errors of a block are summed in shared memory (blockDim.x
// floats, a power of 2) and written, times `mean`, to partial[blockIdx.x], which the step adds
// into the step's loss in a fixed order: no memset, no atomics.
__global__ void loss_gradient(size_t n, float scale, float mean, float* y_then_d_y, const float* __restrict__ x,
                              float* __restrict__ partial) {
  float* squares = shared_floats();
  const size_t idx = global_index();
  float e2 = 0;
  if (idx < n) {
    const float e = y_then_d_y[idx] - x[idx];
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

// The layer operations these kernels make (gpu_training.cuh): pooling, upsampling and their
// gradients through the ReLU, each a launch or two, on NCHW activations. A step adds its
// convolutions, its loss and ReLU after a convolution (relu_in_place).
class ElementwiseLayers : public LayeredTraining {
 public:
  ElementwiseLayers(int threads, Gradients gradients) : LayeredTraining(threads, Layout::nchw, gradients) {}

 protected:
  // ReLU in place on layer l's output: n images.
  void relu_in_place(int l, int n, float* a) {
    const size_t count = size_t(n) * L_[l].out * L_[l].pixels();
    launch(relu, count, count, a);
  }

  void pool(int l, int n, const float* a, float* pooled) override {
    const Conv& c = L_[l];
    launch(pool_forward, size_t(n) * c.out * c.pixels() / 4, size_t(n) * c.out, c.height, c.width, a, pooled);
  }

  void upsample(int l, int n, const float* a, float* up) override {
    const Conv& c = L_[l];
    launch(up_forward, size_t(n) * c.out * c.pixels() * 4, size_t(n) * c.out, c.height, c.width, a, up);
  }

  void pool_backward(int l, const float* a, const float*, const float* d_pooled, float* d_a) override {
    const Conv& c = L_[l];
    const size_t n = size_t(batch_) * c.out * c.pixels();
    launch(ae::pool_backward, n, size_t(batch_) * c.out, c.height, c.width, a, d_pooled, d_a);
    launch(relu_backward, n, n, a, d_a);
  }

  void upsample_backward(int l, const float* d_up, const float* a, float* d_a) override {
    const Conv& c = L_[l];
    const size_t n = size_t(batch_) * c.out * c.pixels();
    launch(up_backward, n, size_t(batch_) * c.out, c.height, c.width, d_up, d_a);
    launch(relu_backward, n, n, a, d_a);
  }
};

}  // namespace
}  // namespace ae

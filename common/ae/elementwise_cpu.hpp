// The element-wise layers of the CPU steps (00_cpu to 03_cpu_blocked), on one image:
// ReLU, 2x2 max pooling and nearest x2 upsampling, each with its gradient. The CPU steps differ
// in their convolutions and in how they share out the images, not in these: one definition
// keeps them the same loops, so that each step's source holds only what it changes (the GPU
// steps' counterpart is elementwise.cuh). Layouts are (channels, height, width), float.
#pragma once
#include <algorithm>
#include <cstddef>

namespace ae {
namespace {

void relu(float* v, size_t n) {
  for (size_t j = 0; j < n; ++j) v[j] = v[j] > 0 ? v[j] : 0.0f;
}

// Zero where the unit was off (its output a is 0 exactly when its input was <= 0).
void relu_backward(const float* a, float* d, size_t n) {
  for (size_t j = 0; j < n; ++j)
    if (!(a[j] > 0)) d[j] = 0;
}

// The input position 2x2 max pooling takes for output (c, y, x): the first maximum of the
// window in row-major order.
size_t pool_source(const float* in, int c, int y, int x, int h, int w) {
  size_t best = (size_t(c) * h + 2 * y) * w + 2 * x;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const size_t j = (size_t(c) * h + 2 * y + dy) * w + 2 * x + dx;
      if (in[j] > in[best]) best = j;
    }
  return best;
}

void pool_forward(int ch, int h, int w, const float* in, float* out) {
  for (int c = 0; c < ch; ++c)
    for (int y = 0; y < h / 2; ++y)
      for (int x = 0; x < w / 2; ++x) out[(size_t(c) * (h / 2) + y) * (w / 2) + x] = in[pool_source(in, c, y, x, h, w)];
}

void pool_backward(int ch, int h, int w, const float* in, const float* d_out, float* d_in) {
  std::fill(d_in, d_in + size_t(ch) * h * w, 0.0f);
  for (int c = 0; c < ch; ++c)
    for (int y = 0; y < h / 2; ++y)
      for (int x = 0; x < w / 2; ++x) d_in[pool_source(in, c, y, x, h, w)] = d_out[(size_t(c) * (h / 2) + y) * (w / 2) + x];
}

// Nearest-neighbour x2 upsampling of (ch, h, w); its backward sums each 2x2 block.
void up_forward(int ch, int h, int w, const float* in, float* out) {
  for (int c = 0; c < ch; ++c)
    for (int y = 0; y < 2 * h; ++y)
      for (int x = 0; x < 2 * w; ++x) out[(size_t(c) * 2 * h + y) * 2 * w + x] = in[(size_t(c) * h + y / 2) * w + x / 2];
}

void up_backward(int ch, int h, int w, const float* d_out, float* d_in) {
  for (int c = 0; c < ch; ++c)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const float* d = d_out + (size_t(c) * 2 * h + 2 * y) * 2 * w + 2 * x;
        d_in[(size_t(c) * h + y) * w + x] = d[0] + d[1] + d[2 * w] + d[2 * w + 1];
      }
}

}  // namespace
}  // namespace ae

// conv5's backward pass and the upsampling's adjoint in one, at a4's resolution. For an a4
// pixel (Y, X), u4's four copies of it (2Y + i, 2X + j) met output pixel (2Y + i - dy, 2X + j -
// dx) through tap (dy, dx); so with
//   D[o][tap] = sum over i, j of d_y[2Y + i - dy][2X + j - dx][o]   (0 outside the image)
// the gradient of a4 (the upsampling's adjoint of conv5's input gradient, through conv4's ReLU)
// and conv5's weight gradient are both sums of the same 27 numbers:
//   d_a4[Y][X][c] = a4 > 0 ? sum over o, tap of weight[o][c][tap] D[o][tap] : 0
//   d_weight[o][c][tap] = sum over (Y, X) of a4[Y][X][c] D[o][tap]
//   d_bias[o] = sum over (Y, X) of D[o][centre]   (every output pixel once)
// A thread per channel keeps its 27 weights and its 27 gradient sums in registers; a block
// takes a contiguous share of the minibatch's a4 rows (blockIdx.x of gridDim.x, the splits),
// makes D for a row's pixels in shared memory (shared by all its channels), and writes its
// sums to partial[blockIdx.x] in the reference layout, weights then biases: sum_partials adds
// the splits in order.
__global__ void __launch_bounds__(kThreads5) conv5_backward(Conv5Shape s, const float* __restrict__ a4, const float* __restrict__ d_y,
                               const float* __restrict__ weight, float* __restrict__ d_a4, float* __restrict__ partial) {
  float* d = shared_floats();  // [s.w][kRow5]: D of the row's a4 pixels
  const int c = threadIdx.x, H = 2 * s.h, W = 2 * s.w;
  const bool real = c < s.in, stored = c < s.ch;
  float wc[kTaps5], dw[kTaps5] = {};
#pragma unroll
  for (int k = 0; k < kTaps5; ++k) wc[k] = real ? weight[(size_t(k / 9) * s.in + c) * 9 + k % 9] : 0.0f;
  float db[kOut5] = {};
  const long rows = long(s.images) * s.h;
  const long first = rows * blockIdx.x / gridDim.x, last = rows * (blockIdx.x + 1) / gridDim.x;
  for (long r = first; r < last; ++r) {
    const int image = int(r / s.h), Y = int(r % s.h);
    __syncthreads();  // the previous row's D is read
    for (int q = threadIdx.x; q < s.w * 9; q += blockDim.x) {
      const int X = q / 9, tap = q % 9, dy = tap / 3 - 1, dx = tap % 3 - 1;
      float4 v = make_float4(0, 0, 0, 0);
      constexpr int kCopies = 2;
#pragma unroll
      for (int i = 0; i < kCopies; ++i)
#pragma unroll
        for (int j = 0; j < kCopies; ++j) {
          const int yy = 2 * Y + i - dy, xx = 2 * X + j - dx;
          if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
            const float4 g = reinterpret_cast<const float4*>(d_y)[(size_t(image) * H + yy) * W + xx];
            v.x += g.x, v.y += g.y, v.z += g.z;
          }
        }
      float* to = d + X * kRow5 + tap;
      to[0] = v.x, to[9] = v.y, to[18] = v.z;
      if (tap == 0) d[X * kRow5 + kTaps5] = 0.0f;  // the padding, read with the last float4
    }
    __syncthreads();
    if (threadIdx.x == 0)
      for (int X = 0; X < s.w; ++X)
#pragma unroll
        for (int o = 0; o < kOut5; ++o) db[o] += d[X * kRow5 + o * 9 + 4];
    if (!stored) continue;
    const size_t at = (size_t(image) * s.h + Y) * s.w * s.ch + c;
    for (int X = 0; X < s.w; ++X) {
      const float a = a4[at + size_t(X) * s.ch];
      float dk[kRow5];
#pragma unroll
      for (int k = 0; k < kRow5; k += 4) {
        const float4 v = *reinterpret_cast<const float4*>(d + X * kRow5 + k);
        dk[k] = v.x, dk[k + 1] = v.y, dk[k + 2] = v.z, dk[k + 3] = v.w;
      }
      float g = 0;
#pragma unroll
      for (int k = 0; k < kTaps5; ++k) {
        g += wc[k] * dk[k];
        dw[k] += a * dk[k];
      }
      d_a4[at + size_t(X) * s.ch] = a > 0 ? g : 0.0f;
    }
  }
  float* split = partial + size_t(blockIdx.x) * (size_t(kTaps5) * s.in + kOut5);
  if (real)
#pragma unroll
    for (int k = 0; k < kTaps5; ++k) split[(size_t(k / 9) * s.in + c) * 9 + k % 9] = dw[k];
  if (threadIdx.x == 0)
#pragma unroll
    for (int o = 0; o < kOut5; ++o) split[size_t(kTaps5) * s.in + o] = db[o];
}

// ---- conv5 at a4's resolution: direct FP32 kernels ----
//
// conv5 has 3 output channels: as a product its N is 3 (8 in the tile), so each value of its
// 256-channel input is multiplied by 27 weights and then thrown away, and 14 stages every one
// of them nine times (once per tap) through shared memory for that. Its input u4 is, besides,
// a4 copied four times (nearest upsampling). Here conv5 reads a4 itself: u4(y, x) = a4(y / 2,
// x / 2), and u4's zero padding is a4's (row -1 of u4 is row -1 of a4, row 2h is row h).
// Each pass is one kernel of FP32 multiply-adds that reads a4 once from memory.

constexpr int kOut5 = 3;       // conv5's output channels (the image's)
constexpr int kTaps5 = 9 * kOut5;  // a channel's weights: [o][tap]
constexpr int kRow5 = 28;      // kTaps5 padded to whole float4s in shared memory
constexpr int kChunk5 = 32;    // a4 channels staged at a time by conv5_forward
constexpr int kThreads5 = 256; // conv5_backward's block: a thread per input channel

struct Conv5Shape {
  int images = 0, h = 0, w = 0;  // a4's planes: h x w, conv5's output 2h x 2w
  int ch = 0, in = 0;            // a4's channels as stored, and the real ones (the weights')
  int band = 0;                  // conv5_forward: a4 rows per block
};

// y[image][2Y + i][2X + j][o] = bias[o] + sum over c, tap of u4(2Y + i + dy, 2X + j + dx)[c]
// weight[o][c][tap], o < 3, and y[...][3] = 0 (the stored fourth channel). weight is the
// reference layout (3, in, 3, 3): the float master weights. A thread computes the four output
// pixels of one a4 pixel (Y, X) (their 9 taps read a 3x3 window of a4); a block covers `band`
// rows of a4 of one image (grid: x = bands, y = images) and stages that band with a one-pixel
// zero halo, kChunk5 channels at a time, each channel a plane (channel-major, so that a warp's
// reads along X are consecutive words), with those channels' weights.
__global__ void conv5_forward(Conv5Shape s, const float* __restrict__ a4, const float* __restrict__ weight,
                              const float* __restrict__ bias, float* __restrict__ y) {
  const int cols = s.w + 2, plane = (s.band + 2) * cols + 1;  // +1: odd pitch, staging without bank conflicts
  float* planes = shared_floats();                             // [kChunk5][plane]
  float* w = planes + kChunk5 * plane;                         // [kChunk5][kRow5]; kChunk5 * plane % 4 == 0
  const int image = blockIdx.y, first = blockIdx.x * s.band;   // the band's first a4 row
  const int tid = threadIdx.x, row = tid / s.w, X = tid % s.w;  // blockDim = band x w
  float sum[2][2][kOut5] = {};

  for (int c0 = 0; c0 < s.ch; c0 += kChunk5) {
    __syncthreads();  // the previous chunk is read
    // A float4 (4 channels of a pixel) per copy: 8 per staged pixel, read along the channels.
    for (int q = tid; q < (s.band + 2) * cols * (kChunk5 / 4); q += blockDim.x) {
      const int pixel = q / (kChunk5 / 4), group = q % (kChunk5 / 4);
      const int Y = first - 1 + pixel / cols, Xs = pixel % cols - 1, c = c0 + 4 * group;
      float4 v = make_float4(0, 0, 0, 0);
      if (Y >= 0 && Y < s.h && Xs >= 0 && Xs < s.w && c < s.ch)
        v = *reinterpret_cast<const float4*>(a4 + ((size_t(image) * s.h + Y) * s.w + Xs) * s.ch + c);
      float* to = planes + 4 * group * plane + pixel;
      to[0] = v.x, to[plane] = v.y, to[2 * plane] = v.z, to[3 * plane] = v.w;
    }
    for (int q = tid; q < kChunk5 * kRow5; q += blockDim.x) {
      const int c = q / kRow5, k = q % kRow5, o = k / 9, tap = k % 9;
      w[q] = k < kTaps5 && c0 + c < s.in ? weight[(size_t(o) * s.in + c0 + c) * 9 + tap] : 0.0f;
    }
    __syncthreads();
    const int chunk = min(kChunk5, s.ch - c0);
    for (int c = 0; c < chunk; ++c) {
      const float* at = planes + c * plane + row * cols + X;  // the window's top left: a4 (Y - 1, X - 1)
      float a[3][3];
#pragma unroll
      for (int r = 0; r < 3; ++r)
#pragma unroll
        for (int q = 0; q < 3; ++q) a[r][q] = at[r * cols + q];
      float wc[kRow5];
#pragma unroll
      for (int k = 0; k < kRow5; k += 4) {
        const float4 v = *reinterpret_cast<const float4*>(w + c * kRow5 + k);
        wc[k] = v.x, wc[k + 1] = v.y, wc[k + 2] = v.z, wc[k + 3] = v.w;
      }
      // Output pixel (2Y + i, 2X + j), tap (dy, dx) reads u4 row 2Y + i + dy, which is a4 row
      // Y + floor((i + dy) / 2): window row (i + dy + 2) / 2 for dy = -1, 0, 1.
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
            for (int dx = -1; dx <= 1; ++dx) {
              const float v = a[(i + dy + 2) / 2][(j + dx + 2) / 2];
#pragma unroll
              for (int o = 0; o < kOut5; ++o) sum[i][j][o] += v * wc[o * 9 + (dy + 1) * 3 + dx + 1];
            }
    }
  }
  const int Y = first + row;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const size_t pixel = (size_t(image) * 2 * s.h + 2 * Y + i) * 2 * s.w + 2 * X + j;
      reinterpret_cast<float4*>(y)[pixel] =
          make_float4(sum[i][j][0] + bias[0], sum[i][j][1] + bias[1], sum[i][j][2] + bias[2], 0.0f);
    }
}

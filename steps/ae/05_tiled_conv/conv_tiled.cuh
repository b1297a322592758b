// out[b][o][y][x] = bias[o] + sum over c, tap of weight[c][tap][o] in[b][c][y+kh-1][x+kw-1]
// (tap = kh * 3 + kw, zero outside the image; bias may be null). `weight` is arranged with the
// output channel fastest (arrange_weights), so that a chunk's weights load coalesced and a
// thread reads four of its channels' weights at once, the same float4 for the whole warp.
// Each thread computes kRowsPerThread pixels in one column for kOut output channels: per
// staged channel it reads 12 inputs and 9 x kOut / 4 float4 weights for 2 x 9 x kOut
// multiply-adds. Grid: x = image x tiles, y = blocks of output channels.
template <int kOut>
__global__ void __launch_bounds__(256)
    conv_tiled(int in_ch, int out_ch, int h, int w, TileGeometry g, const float* __restrict__ in,
               const float* __restrict__ weight, const float* __restrict__ bias, float* __restrict__ out) {
  float* staged_in = shared_floats();                            // [kChannelChunk][tile_h + 2][pitch]
  float* staged_weight = staged_in + kChannelChunk * g.plane;    // [kChannelChunk][9][block_out]
  const int image = blockIdx.x / g.tiles, tile = blockIdx.x % g.tiles;
  const int x0 = tile % g.tiles_x * g.tile_w, y0 = tile / g.tiles_x * g.tile_h, o0 = blockIdx.y * g.block_out;
  const int row = threadIdx.y * kRowsPerThread, channel = threadIdx.z * kOut;  // the thread's first, within the tile
  const int threads = blockDim.x * blockDim.y * blockDim.z;
  const int rank = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int staged_w = g.tile_w + 2, staged_pixels = (g.tile_h + 2) * staged_w;
  const size_t image_pixels = size_t(h) * w;
  const float* image_in = in + size_t(image) * in_ch * image_pixels;

  float sum[kRowsPerThread][kOut];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r)
#pragma unroll
    for (int j = 0; j < kOut; ++j) sum[r][j] = 0;

  for (int c0 = 0; c0 < in_ch; c0 += kChannelChunk) {
    // The tile and its halo: a thread finds its staged pixels once and copies each from every
    // channel of the chunk (zero outside the image and past the last channel).
    for (int e = rank; e < staged_pixels; e += threads) {
      const int r = e / staged_w, col = e % staged_w;
      const int y = y0 - 1 + r, x = x0 - 1 + col;
      const bool inside = y >= 0 && y < h && x >= 0 && x < w;
      const size_t at = inside ? size_t(y) * w + x : 0;
      float* to = staged_in + r * g.pitch + col;
#pragma unroll
      for (int c = 0; c < kChannelChunk; ++c)
        to[c * g.plane] = inside && c0 + c < in_ch ? image_in[(size_t(c0) + c) * image_pixels + at] : 0.0f;
    }
    for (int k = rank; k < kChannelChunk * 9 * g.block_out; k += threads) {
      const int ct = k / g.block_out, o = k % g.block_out;  // ct = chunk channel x 9 + tap
      staged_weight[k] =
          c0 * 9 + ct < in_ch * 9 && o0 + o < out_ch ? weight[(size_t(c0) * 9 + ct) * out_ch + o0 + o] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int c = 0; c < kChannelChunk; ++c) {
      if (c0 + c >= in_ch) break;  // the same for the whole block; no barrier inside
      const float* at = staged_in + c * g.plane + row * g.pitch + threadIdx.x;
      float v[kRowsPerThread + 2][3];
#pragma unroll
      for (int r = 0; r < kRowsPerThread + 2; ++r)
#pragma unroll
        for (int col = 0; col < 3; ++col) v[r][col] = at[r * g.pitch + col];
#pragma unroll
      for (int tap = 0; tap < 9; ++tap) {
        const float4* k4 = reinterpret_cast<const float4*>(staged_weight + (c * 9 + tap) * g.block_out + channel);
#pragma unroll
        for (int q = 0; q < kOut / 4; ++q) {
          const float4 k = k4[q];
#pragma unroll
          for (int r = 0; r < kRowsPerThread; ++r) {
            const float a = v[r + tap / 3][tap % 3];
            sum[r][4 * q] += k.x * a;
            sum[r][4 * q + 1] += k.y * a;
            sum[r][4 * q + 2] += k.z * a;
            sum[r][4 * q + 3] += k.w * a;
          }
        }
      }
    }
    __syncthreads();  // the chunk has been read before the next one overwrites it
  }

  const int x = x0 + threadIdx.x;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int y = y0 + row + r;
    if (y >= h || x >= w) continue;
#pragma unroll
    for (int j = 0; j < kOut; ++j) {
      const int o = o0 + channel + j;
      if (o < out_ch)
        out[(size_t(image) * out_ch + o) * image_pixels + size_t(y) * w + x] = sum[r][j] + (bias ? bias[o] : 0.0f);
    }
  }
}

// The lanes of this thread's warp that exist (a block of the 4x4 layers of the tiny model ends
// in a partial warp): the mask of the pairwise shuffles below. A block's thread count is a
// multiple of the even tile width, so a lane's neighbour (lane ^ 1) always exists.
__device__ __forceinline__ unsigned warp_lanes(int rank, int threads) {
  const int present = min(32, threads - (rank & ~31));
  return present == 32 ? 0xffffffffu : (1u << present) - 1;
}

// The tiled 3x3 convolution of 07 (the same staging and inner loop), with the input read
// through `kIn` and the sums finished by `kMode` instead of written as they are.
// out[b][o][y][x] = bias[o] + sum over c, tap of weight[c][tap][o] in[b][c][y+kh-1][x+kw-1]
// (tap = kh * 3 + kw, zero outside the image). `weight` is arranged with the output channel
// fastest (arrange_weights), so that a chunk's weights load coalesced and a thread reads four
// of its channels' weights at once, the same float4 for the whole warp. Each thread computes
// kRowsPerThread pixels in one column for kOut output channels. Grid: x = image x tiles, y =
// blocks of output channels.
//
// The 2x2 windows of pooling and of upsampling's adjoint are a thread's two rows (row is even)
// and its neighbour's column: threadIdx.x runs along the width and tile_w is even, so the
// neighbour is the next lane, and one shuffle brings its two values.
template <int kOut, Input kIn, Output kMode>
__global__ void __launch_bounds__(256)
    conv_tiled(int in_ch, int out_ch, int h, int w, TileGeometry g, const float* __restrict__ in,
               const float* __restrict__ weight, Epilogue e) {
  static_assert(kRowsPerThread == 2, "the 2x2 windows of the epilogues are a thread's two rows");
  float* staged_in = shared_floats();                            // [kChannelChunk][tile_h + 2][pitch]
  float* staged_weight = staged_in + kChannelChunk * g.plane;    // [kChannelChunk][9][block_out]
  const int image = blockIdx.x / g.tiles, tile = blockIdx.x % g.tiles;
  const int x0 = tile % g.tiles_x * g.tile_w, y0 = tile / g.tiles_x * g.tile_h, o0 = blockIdx.y * g.block_out;
  const int row = threadIdx.y * kRowsPerThread, channel = threadIdx.z * kOut;  // the thread's first, within the tile
  const int threads = blockDim.x * blockDim.y * blockDim.z;
  const int rank = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int staged_w = g.tile_w + 2, staged_pixels = (g.tile_h + 2) * staged_w;
  const size_t image_pixels = size_t(h) * w, in_pixels = input_pixels<kIn>(h, w);
  const float* image_in = in + size_t(image) * in_ch * in_pixels;

  float sum[kRowsPerThread][kOut];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r)
#pragma unroll
    for (int j = 0; j < kOut; ++j) sum[r][j] = 0;

  for (int c0 = 0; c0 < in_ch; c0 += kChannelChunk) {
    for (int p = rank; p < staged_pixels; p += threads) {
      const int r = p / staged_w, col = p % staged_w;
      const int y = y0 - 1 + r, x = x0 - 1 + col;
      const bool inside = y >= 0 && y < h && x >= 0 && x < w;
      const size_t at = inside ? input_at<kIn>(y, x, w) : 0;
      float* to = staged_in + r * g.pitch + col;
#pragma unroll
      for (int c = 0; c < kChannelChunk; ++c)
        to[c * g.plane] = inside && c0 + c < in_ch ? image_in[(size_t(c0) + c) * in_pixels + at] : 0.0f;
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
    __syncthreads();  // the chunk has been read before the next one overwrites it (or the epilogue reuses it)
  }

  const int x = x0 + threadIdx.x, y = y0 + row;
  const bool column = x < w;
  const float* bias = e.bias;
  if constexpr (kMode == Output::bias_relu || kMode == Output::bias) {
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      if (y + r >= h || !column) continue;
#pragma unroll
      for (int j = 0; j < kOut; ++j) {
        const int o = o0 + channel + j;
        if (o >= out_ch) continue;
        const float a = sum[r][j] + bias[o];
        e.out[(size_t(image) * out_ch + o) * image_pixels + size_t(y + r) * w + x] =
            kMode == Output::bias_relu ? fmaxf(a, 0.0f) : a;
      }
    }
  } else if constexpr (kMode == Output::bias_loss) {
    // d_y over the reconstruction's place, and the squared errors summed over the block in a
    // fixed order (the same loss every run): 32 lanes each add a strided share, one adds those.
    float squares = 0;
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      if (y + r >= h || !column) continue;
#pragma unroll
      for (int j = 0; j < kOut; ++j) {
        const int o = o0 + channel + j;
        if (o >= out_ch) continue;
        const size_t at = (size_t(image) * out_ch + o) * image_pixels + size_t(y + r) * w + x;
        const float error = sum[r][j] + bias[o] - e.target[at];
        e.out[at] = e.scale * error;
        squares += error * error;
      }
    }
    float* shared = shared_floats();  // threads + 32 floats; the staged chunk is no longer read
    shared[rank] = squares;
    __syncthreads();
    if (rank < 32) {
      float share = 0;
      for (int i = rank; i < threads; i += 32) share += shared[i];
      shared[threads + rank] = share;
    }
    __syncthreads();
    if (rank == 0) {
      float block = 0;
      for (int i = 0; i < min(32, threads); ++i) block += shared[threads + i];
      e.partial[blockIdx.y * gridDim.x + blockIdx.x] = e.mean * block;
    }
  } else {
    // The 2x2 modes: h and w are even, so a window is wholly inside the image or wholly out.
    const unsigned lanes = warp_lanes(rank, threads);
    const bool inside = column && y < h;
    if constexpr (kMode == Output::bias_relu_pool || kMode == Output::up_adjoint_relu) {
      const int ph = h / 2, pw = w / 2;
      const bool left = (threadIdx.x & 1) == 0;  // the window's left column writes its result
#pragma unroll
      for (int j = 0; j < kOut; ++j) {
        const int o = o0 + channel + j;
        const size_t at = (size_t(image) * out_ch + o) * ph * pw + size_t(y / 2) * pw + x / 2;
        if constexpr (kMode == Output::bias_relu_pool) {
          const float b = o < out_ch ? bias[o] : 0.0f;
          const float top = fmaxf(sum[0][j] + b, 0.0f), bottom = fmaxf(sum[1][j] + b, 0.0f);
          const float top_right = __shfl_xor_sync(lanes, top, 1), bottom_right = __shfl_xor_sync(lanes, bottom, 1);
          if (left && inside && o < out_ch) {
            // The first maximum in row-major order, the pixel the reference's pooling takes.
            float best = top;
            unsigned char won = 0;
            if (top_right > best) best = top_right, won = 1;
            if (bottom > best) best = bottom, won = 2;
            if (bottom_right > best) best = bottom_right, won = 3;
            e.out[at] = best;
            e.winner[at] = won;
          }
        } else {
          // Upsampling copied a to four pixels, so its adjoint adds their four gradients; ReLU's
          // gradient passes where a (the ReLU's output) is positive.
          float window = sum[0][j] + sum[1][j];
          window += __shfl_xor_sync(lanes, window, 1);
          if (left && inside && o < out_ch) e.out[at] = e.gate[at] > 0 ? window : 0.0f;
        }
      }
    } else {
      static_assert(kMode == Output::unpool_relu, "an output mode without an epilogue");
      // The gradient of the pooled value goes to the window's winner, and through the ReLU
      // where the pooled value (the winner's) is positive; the window's other three get 0.
      // The image of d_a is (2h, 2w): a thread writes its two rows as four float2 rows.
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) {
        if (!inside || y + r >= h) continue;
#pragma unroll
        for (int j = 0; j < kOut; ++j) {
          const int o = o0 + channel + j;
          if (o >= out_ch) continue;
          const size_t at = (size_t(image) * out_ch + o) * image_pixels + size_t(y + r) * w + x;
          const float d = e.gate[at] > 0 ? sum[r][j] : 0.0f;
          const int won = e.winner[at];
          float* to = e.out + (size_t(image) * out_ch + o) * 4 * image_pixels + size_t(2 * (y + r)) * (2 * w) + 2 * x;
          *reinterpret_cast<float2*>(to) = make_float2(won == 0 ? d : 0.0f, won == 1 ? d : 0.0f);
          *reinterpret_cast<float2*>(to + 2 * w) = make_float2(won == 2 ? d : 0.0f, won == 3 ? d : 0.0f);
        }
      }
    }
  }
}

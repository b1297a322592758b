// partial[s][o][i][tap] = sum over split s's items (image b, rows y) and every x of
// d_out[b][o][y][x] in[b][i][y+kh-1][x+kw-1] (in read through input_at: conv4 and conv5 take
// the layer before's activations at half resolution and upsample them as they stage them), and partial[s][out_ch x in_ch x 9 + o] = the sum
// of d_out[b][o] over them (the bias gradient, from the threads of the first input block).
// A thread keeps a 3x3 window of each of its input channels in registers and slides it along
// the row: per pixel 2 x 3 new inputs and 4 d_out values feed 72 multiply-adds.
template <Input kIn>
__global__ void __launch_bounds__(kGradThreads)
    conv_weight_gradient(int batch, int in_ch, int out_ch, int h, int w, GradientGeometry g, const float* __restrict__ in,
                         const float* __restrict__ d_out, float* __restrict__ partial) {
  const int block_out = g.out_groups * kGradOut, block_in = g.in_groups * kGradIn;
  float* staged_d = shared_floats();                        // [block_out][d_pitch]: rows x w pixels
  float* staged_in = staged_d + block_out * g.d_pitch;      // [block_in][x_plane]: (rows + 2) x (w + 2) pixels
  const int o0 = blockIdx.x / g.in_blocks * block_out, i0 = blockIdx.x % g.in_blocks * block_in;
  // The thread's channels: o0 + og + out_groups jo and i0 + ig + in_groups ji.
  const int og = threadIdx.x % g.out_groups, ig = threadIdx.x / g.out_groups;
  const int threads = blockDim.x, xw = w + 2;
  const size_t image_pixels = size_t(h) * w;
  const int items = batch * g.row_tiles;
  // The staging of an item, shared by all the block's threads (stage_planes).
  const int d_pixels = g.rows * w, x_pixels = (g.rows + 2) * xw;
  const StagingLanes d_lane(d_pixels, threads), x_lane(x_pixels, threads);
  const int first = int(long(items) * blockIdx.y / g.splits), last = int(long(items) * (blockIdx.y + 1) / g.splits);

  float sum[kGradOut][kGradIn][9], bias_sum[kGradOut];
#pragma unroll
  for (int jo = 0; jo < kGradOut; ++jo) {
    bias_sum[jo] = 0;
#pragma unroll
    for (int ji = 0; ji < kGradIn; ++ji)
#pragma unroll
      for (int tap = 0; tap < 9; ++tap) sum[jo][ji][tap] = 0;
  }

  for (int item = first; item < last; ++item) {
    const int b = item / g.row_tiles, y0 = item % g.row_tiles * g.rows;
    __syncthreads();  // the previous item's tiles have been read
    // d_out: the rows are contiguous in each channel; rows past the image are zero.
    const float* d_rows = d_out + (size_t(b) * out_ch + o0) * image_pixels + size_t(y0) * w;
    stage_planes(d_lane, d_pixels, block_out, out_ch - o0, d_rows, image_pixels, staged_d, g.d_pitch,
                 [&](int p) { return y0 + p / w < h ? long(p) : -1L; });
    // The input rows with their halo, zero outside the image.
    const size_t in_pixels = input_pixels<kIn>(h, w);
    const float* image_in = in + (size_t(b) * in_ch + i0) * in_pixels;
    stage_planes(x_lane, x_pixels, block_in, in_ch - i0, image_in, in_pixels, staged_in, g.x_plane, [&](int e) {
      const int y = y0 - 1 + e / xw, x = e % xw - 1;
      return y >= 0 && y < h && x >= 0 && x < w ? long(input_at<kIn>(y, x, w)) : -1L;
    });
    __syncthreads();
    for (int r = 0; r < g.rows; ++r) {
      float window[kGradIn][3][3];  // [channel][kh][kw]: input (y + kh - 1, x + kw - 1) for output pixel (y, x)
#pragma unroll
      for (int ji = 0; ji < kGradIn; ++ji)
#pragma unroll
        for (int kh = 0; kh < 3; ++kh) {
          const float* staged = staged_in + (ig + g.in_groups * ji) * g.x_plane + (r + kh) * xw;
          window[ji][kh][0] = staged[0];
          window[ji][kh][1] = staged[1];
        }
      for (int x = 0; x < w; ++x) {
#pragma unroll
        for (int ji = 0; ji < kGradIn; ++ji)
#pragma unroll
          for (int kh = 0; kh < 3; ++kh)
            window[ji][kh][2] = staged_in[(ig + g.in_groups * ji) * g.x_plane + (r + kh) * xw + x + 2];
        float d[kGradOut];
#pragma unroll
        for (int jo = 0; jo < kGradOut; ++jo) {
          d[jo] = staged_d[(og + g.out_groups * jo) * g.d_pitch + r * w + x];
          bias_sum[jo] += d[jo];
        }
#pragma unroll
        for (int jo = 0; jo < kGradOut; ++jo)
#pragma unroll
          for (int ji = 0; ji < kGradIn; ++ji)
#pragma unroll
            for (int kh = 0; kh < 3; ++kh)
#pragma unroll
              for (int kw = 0; kw < 3; ++kw) sum[jo][ji][kh * 3 + kw] += d[jo] * window[ji][kh][kw];
#pragma unroll
        for (int ji = 0; ji < kGradIn; ++ji)
#pragma unroll
          for (int kh = 0; kh < 3; ++kh) {
            window[ji][kh][0] = window[ji][kh][1];
            window[ji][kh][1] = window[ji][kh][2];
          }
      }
    }
  }

  float* split = partial + size_t(blockIdx.y) * (size_t(out_ch) * in_ch * 9 + out_ch);
#pragma unroll
  for (int jo = 0; jo < kGradOut; ++jo) {
    const int o = o0 + og + g.out_groups * jo;
    if (o >= out_ch) continue;
#pragma unroll
    for (int ji = 0; ji < kGradIn; ++ji) {
      const int i = i0 + ig + g.in_groups * ji;
      if (i >= in_ch) continue;
#pragma unroll
      for (int tap = 0; tap < 9; ++tap) split[(size_t(o) * in_ch + i) * 9 + tap] = sum[jo][ji][tap];
    }
    if (i0 == 0 && ig == 0) split[size_t(out_ch) * in_ch * 9 + o] = bias_sum[jo];
  }
}

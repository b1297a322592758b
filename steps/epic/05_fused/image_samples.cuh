// A 64-point transform as 8 x 8, for the transform whose element e lies at line[e * step]:
// with e = 8 n1 + n2 and k = k1 + 8 k2,
//   X[k1 + 8 k2] = sum_n2 e^{2 pi i n2 k2 / 8} [ e^{2 pi i n2 k1 / 64} sum_n1 x[8 n1 + n2] e^{2 pi i n1 k1 / 8} ].
// Round two (thread k1): the outer 8-point DFT over n2 of elements 8 k1 .. 8 k1 + 7; v[k2]
// becomes X[k1 + 8 k2]. The caller writes it back (after every thread has read) or keeps it.
__device__ __forceinline__ void round_two(const float2* line, int step, int k1, float2 (&v)[8]) {
#pragma unroll
  for (int n2 = 0; n2 < 8; ++n2) v[n2] = line[(8 * k1 + n2) * step];
  dft8(v);
}
// Round one of a row (thread n2 of the row's eight), in place: the inner 8-point DFT over n1
// and the twiddle, written back to the elements the thread read (8 k1 + n2 is again one of
// them). (The columns' round one is in the kernel: it gathers its input.)
__device__ __forceinline__ void round_one(float2* line, int n2) {
  float2 v[8];
#pragma unroll
  for (int n1 = 0; n1 < 8; ++n1) v[n1] = line[8 * n1 + n2];
  dft8(v);
  line[n2] = v[0];  // k1 = 0: the twiddle is 1
#pragma unroll
  for (int k1 = 1; k1 < 8; ++k1) line[8 * k1 + n2] = mul(v[k1], c_twiddle[n2 * k1]);
}

// A block images a slice of one channel's samples, one sample a pass. A thread is (lane,
// eighth). POLS: 1 or 2 grids, a template parameter: the loops over the polarizations unroll.
//
// Columns: lane x transforms column x (`column_lists`, every column in order). Round one
// gathers the column's eight cells from their lists straight into registers (no zeroing, no
// atomics; each stand decoded once a sample into `fields`, staged a sample ahead) and writes A
// (unpadded: only ever read down a column); round two reads A and writes the column into the
// grid B. Rows: row `lane` of B, round one in place, round two into registers, where the
// products are summed. Three barriers a sample; A and B are what lets one
// barrier serve each exchange: a round never writes what another thread may still read.
//
// The sums of a pixel over the samples are the four numbers every product is made of: |X|^2,
// |Y|^2, and the real and imaginary parts of X conj(Y).
template <int POLS>
__global__ void __launch_bounds__(kThreads, 1)
    image_samples(Shape s, int samples, int per_slice, ProductList pl, const uint8_t* __restrict__ volts,
                  const int2* __restrict__ entries, const int32_t* __restrict__ entry_first,
                  const uint4* __restrict__ entry_ends, float* image) {
  extern __shared__ float2 shared[];
  constexpr int kGrid = kN * kRow;
  float2* const grid_b = shared;                                                 // POLS padded grids
  float2* const grid_a = shared + POLS * kGrid;                                  // POLS x kN rows of kN columns
  float4* const fields = reinterpret_cast<float4*>(grid_a + POLS * kN * kN);     // 2 samples x stands
  const int c = blockIdx.x, first = blockIdx.y * per_slice, last = min(samples, first + per_slice);
  const int lane = threadIdx.x % kN, eighth = threadIdx.x / kN;
  const int sample_bytes = s.stands * POLS;
  const uint8_t* channel_bytes = volts + size_t(c) * sample_bytes;  // + t * channels * sample_bytes
  const size_t sample_stride = size_t(s.channels) * sample_bytes;

  // Thread a fetches stand a's bytes two samples ahead and stages them decoded one sample ahead.
  uint32_t ahead = 0;
  auto fetch = [&](int t) {
    if (int(threadIdx.x) < s.stands && t < last) {
      const uint8_t* b = channel_bytes + size_t(t) * sample_stride + threadIdx.x * POLS;
      ahead = POLS > 1 ? *reinterpret_cast<const uint16_t*>(b) : *b;
    }
  };
  auto stage = [&](int t) {
    if (int(threadIdx.x) < s.stands) fields[((t - first) & 1) * s.stands + threadIdx.x] = decode_stand(ahead, POLS);
  };
  fetch(first);
  stage(first);
  fetch(first + 1);
  __syncthreads();

  float xx[8] = {}, yy[8] = {}, xy_re[8] = {}, xy_im[8] = {};  // pixel (row lane, column eighth + 8 k)
  for (int t = first; t < last; ++t) {
    // Columns, round one: gather the eight cells, both polarizations, from the staged fields.
    const float4* now = fields + ((t - first) & 1) * s.stands;
    {
      const size_t thread = (size_t(c) * kN + lane) * 8 + eighth;  // its run of gather entries
      const int2* run = entries + __ldg(entry_first + thread);
      const uint4 ends = __ldg(entry_ends + thread);
      float2 v[POLS][8];
#pragma unroll
      for (int n1 = 0; n1 < 8; ++n1) {
        float4 xy = make_float4(0, 0, 0, 0);
        for (int e = n1 > 0 ? cell_end(ends, n1 - 1) : 0; e < cell_end(ends, n1); ++e) {
          const int2 entry = run[e];  // (stand, weight)
          const float w = __int_as_float(entry.y);
          const float4 f = now[entry.x];
          xy.x += w * f.x, xy.y += w * f.y;
          if (POLS > 1) xy.z += w * f.z, xy.w += w * f.w;
        }
        v[0][n1] = make_float2(xy.x, xy.y);
        if (POLS > 1) v[POLS - 1][n1] = make_float2(xy.z, xy.w);
      }
#pragma unroll
      for (int p = 0; p < POLS; ++p) {
        dft8(v[p]);
#pragma unroll
        for (int k1 = 0; k1 < 8; ++k1)  // k1 = 0: the twiddle is 1 (the loop is unrolled: no test at run time)
          grid_a[(p * kN + 8 * k1 + eighth) * kN + lane] = k1 == 0 ? v[p][0] : mul(v[p][k1], c_twiddle[eighth * k1]);
      }
    }
    // The next sample's fields into the other buffer (last read a sample ago, before a barrier),
    // and the bytes of the one after that from global memory, a whole sample ahead of their use.
    if (t + 1 < last) stage(t + 1);
    fetch(t + 2);
    __syncthreads();

    // Columns, round two: A's column -> its column of the grids.
    {
      const int x = lane;
#pragma unroll
      for (int p = 0; p < POLS; ++p) {
        float2 v[8];
        round_two(grid_a + p * kN * kN + lane, kN, eighth, v);
#pragma unroll
        for (int k2 = 0; k2 < 8; ++k2) grid_b[p * kGrid + (eighth + 8 * k2) * kRow + x] = v[k2];
      }
    }
    __syncthreads();

    // Rows, round one, in place; round two into registers, then the products.
#pragma unroll
    for (int p = 0; p < POLS; ++p) round_one(grid_b + p * kGrid + lane * kRow, eighth);
    __syncthreads();
    float2 v[POLS][8];
#pragma unroll
    for (int p = 0; p < POLS; ++p) round_two(grid_b + p * kGrid + lane * kRow, 1, eighth, v[p]);
    // v[p][k] is the field of pol p at (row lane, column eighth + 8 k).
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float2 fx = v[0][k];
      xx[k] = fmaf(fx.x, fx.x, fmaf(fx.y, fx.y, xx[k]));  // two fused multiply-adds a sum
      if (POLS > 1) {
        const float2 fy = v[POLS - 1][k];
        yy[k] = fmaf(fy.x, fy.x, fmaf(fy.y, fy.y, yy[k]));
        xy_re[k] = fmaf(fx.x, fy.x, fmaf(fx.y, fy.y, xy_re[k]));
        xy_im[k] = fmaf(fx.y, fy.x, fmaf(-fx.x, fy.y, xy_im[k]));
      }
    }
  }

  // The products of the slice, added to the image (zeroed once a run): a channel's slices add
  // into the same pixels, hence atomics. Zenith to the centre, as the other steps.
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int jy = lane, jx = eighth + 8 * k;
    const size_t dst = size_t((jy + kN / 2) & (kN - 1)) * kN + ((jx + kN / 2) & (kN - 1));
    add_pixel_sums(image, s, pl, c, dst, xx[k], yy[k], xy_re[k], xy_im[k]);
  }
}

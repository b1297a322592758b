// A 64-point transform as 8 x 8, for the transform whose element e lies at line[e * step]:
// with e = 8 n1 + n2 and k = k1 + 8 k2,
//   X[k1 + 8 k2] = sum_n2 e^{2 pi i n2 k2 / 8} [ e^{2 pi i n2 k1 / 64} sum_n1 x[8 n1 + n2] e^{2 pi i n1 k1 / 8} ].
// Round two (thread k1): the outer 8-point DFT over n2 of elements 8 k1 .. 8 k1 + 7; v[k2]
// becomes X[k1 + 8 k2]. The caller writes it back (after every thread has read) or keeps it.
__device__ __forceinline__ void round_two(const Pair* line, int step, int k1, Pair (&v)[8]) {
#pragma unroll
  for (int n2 = 0; n2 < 8; ++n2) v[n2] = line[(8 * k1 + n2) * step];
  dft8(v);
}
// Round one of a row (thread n2 of the row's eight), in place: the inner 8-point DFT over n1
// and the twiddle, written back to the elements the thread read (8 k1 + n2 is again one of
// them). Element 8 n1 + n2 is read only where bit n1 of `occupied` is set: a column with no
// stand is zero (its transform too), and the grid's copy of it is stale. (The columns' round
// one is in the kernel: it gathers its input.)
__device__ __forceinline__ void round_one(Pair* line, int n2, unsigned occupied) {
  Pair v[8];
#pragma unroll
  for (int n1 = 0; n1 < 8; ++n1)
    v[n1] = occupied >> n1 & 1 ? line[8 * n1 + n2] : Pair{__float2half2_rn(0.f), __float2half2_rn(0.f)};
  dft8(v);
  line[n2] = v[0];  // k1 = 0: the twiddle is 1
#pragma unroll
  for (int k1 = 1; k1 < 8; ++k1) line[8 * k1 + n2] = twiddle(v[k1], n2 * k1);
}

// 07's kernel with a grid of pairs: one holds both polarizations (with one polarization, Y is
// zero), so the kernel no longer depends on their number. The same trips, always of two
// samples (half the bytes of 07's grids: two fit in shared memory whatever the aperture, at
// most 164 KB), occupied columns shared among the threads, three barriers a trip. kMinBlocks: the blocks an
// SM must hold at once (--min-blocks), which caps the registers a thread may use (65,536 per
// SM: 128 for one block of 512 threads, 64 for two, at the cost of spilled values).
template <int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    image_samples(Shape s, int samples, int per_slice, ProductList pl, const uint8_t* __restrict__ volts,
                  const int32_t* __restrict__ column_order, const int32_t* __restrict__ occupied_columns,
                  const int2* __restrict__ entries, const int32_t* __restrict__ entry_first,
                  const uint4* __restrict__ entry_ends, int a_row, float* image) {
  constexpr int TRIP = 2, kGrid = kN * kRow;
  extern __shared__ Pair shared[];
  Pair* const grid_b = shared;                    // TRIP padded grids
  Pair* const grid_a = shared + TRIP * kGrid;     // kN rows of a_row items
  float4* const fields = reinterpret_cast<float4*>(grid_a + kN * a_row);  // 2 trips x TRIP x stands
  const int c = blockIdx.x, first = blockIdx.y * per_slice, last = min(samples, first + per_slice);
  const int lane = threadIdx.x % kN, eighth = threadIdx.x / kN, pols = s.pols;
  const int sample_bytes = s.stands * pols;
  const uint8_t* channel_bytes = volts + size_t(c) * sample_bytes;  // + t * channels * sample_bytes
  const size_t sample_stride = size_t(s.channels) * sample_bytes;
  const int occupied = __ldg(occupied_columns + c);
  const int32_t* columns = column_order + size_t(c) * kN;
  unsigned row_mask = 0;  // bit n1: column 8 n1 + eighth holds a stand
  for (int ci = 0; ci < occupied; ++ci) {
    const int x = __ldg(columns + ci);
    if (x % 8 == eighth) row_mask |= 1u << (x / 8);
  }

  // Thread a fetches stand a's bytes of a trip's samples two trips ahead and stages them
  // decoded one trip ahead.
  uint32_t ahead[TRIP] = {};
  auto fetch = [&](int t) {
#pragma unroll
    for (int k = 0; k < TRIP; ++k)
      if (int(threadIdx.x) < s.stands && t + k < last) {
        const uint8_t* b = channel_bytes + size_t(t + k) * sample_stride + threadIdx.x * pols;
        ahead[k] = pols > 1 ? *reinterpret_cast<const uint16_t*>(b) : *b;
      }
  };
  auto stage = [&](int t) {
    float4* to = fields + ((t - first) / TRIP & 1) * TRIP * s.stands;
    if (int(threadIdx.x) < s.stands)
#pragma unroll
      for (int k = 0; k < TRIP; ++k) to[k * s.stands + threadIdx.x] = decode_stand(ahead[k], pols);
  };
  fetch(first);
  stage(first);
  fetch(first + TRIP);
  __syncthreads();

  float xx[8] = {}, yy[8] = {}, xy_re[8] = {}, xy_im[8] = {};  // pixel (row lane, column eighth + 8 k)
  for (int t = first; t < last; t += TRIP) {
    const int count = min(TRIP, last - t), items = count * occupied;  // samples, column transforms
    // Columns, round one: gather the eight cells in float, round each to a pair of half2.
    const float4* now = fields + ((t - first) / TRIP & 1) * TRIP * s.stands;
    for (int i = lane; i < items; i += kN) {
      const int sample = i >= occupied, ci = i - sample * occupied;  // TRIP <= 2: no division
      const size_t thread = (size_t(c) * kN + ci) * 8 + eighth;  // its run of gather entries
      const int2* run = entries + __ldg(entry_first + thread);
      const uint4 ends = __ldg(entry_ends + thread);
      const float4* f_of = now + sample * s.stands;
      Pair v[8];
#pragma unroll
      for (int n1 = 0; n1 < 8; ++n1) {
        float4 xy = make_float4(0, 0, 0, 0);
        for (int e = n1 > 0 ? cell_end(ends, n1 - 1) : 0; e < cell_end(ends, n1); ++e) {
          const int2 entry = run[e];  // (stand, weight)
          const float w = __int_as_float(entry.y);
          const float4 f = f_of[entry.x];
          xy.x += w * f.x, xy.y += w * f.y, xy.z += w * f.z, xy.w += w * f.w;
        }
        v[n1] = {__floats2half2_rn(xy.x, xy.z), __floats2half2_rn(xy.y, xy.w)};
      }
      dft8(v);
#pragma unroll
      for (int k1 = 0; k1 < 8; ++k1)  // k1 = 0: the twiddle is 1 (the loop is unrolled: no test at run time)
        grid_a[(8 * k1 + eighth) * a_row + i] = k1 == 0 ? v[0] : twiddle(v[k1], eighth * k1);
    }
    // The next trip's fields into the other buffer (last read a trip ago, before a barrier),
    // and the bytes of the one after that from global memory, a whole trip ahead of their use.
    if (t + TRIP < last) stage(t + TRIP);
    fetch(t + 2 * TRIP);
    __syncthreads();

    // Columns, round two: A's item -> its column of the sample's grid.
    for (int i = lane; i < items; i += kN) {
      const int sample = i >= occupied, x = __ldg(columns + i - sample * occupied);
      Pair v[8];
      round_two(grid_a + i, a_row, eighth, v);
#pragma unroll
      for (int k2 = 0; k2 < 8; ++k2) grid_b[sample * kGrid + (eighth + 8 * k2) * kRow + x] = v[k2];
    }
    __syncthreads();

    // Rows, round one, in place; round two into registers, then the products in float:
    // X = (re.x, im.x), Y = (re.y, im.y).
    for (int g = 0; g < count; ++g) round_one(grid_b + g * kGrid + lane * kRow, eighth, row_mask);
    __syncthreads();
    for (int sample = 0; sample < count; ++sample) {
      Pair v[8];
      round_two(grid_b + sample * kGrid + lane * kRow, 1, eighth, v);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float2 re = __half22float2(v[k].re), im = __half22float2(v[k].im);
        xx[k] = fmaf(re.x, re.x, fmaf(im.x, im.x, xx[k]));  // two fused multiply-adds a sum
        yy[k] = fmaf(re.y, re.y, fmaf(im.y, im.y, yy[k]));
        xy_re[k] = fmaf(re.x, re.y, fmaf(im.x, im.y, xy_re[k]));
        xy_im[k] = fmaf(im.x, re.y, fmaf(-re.x, im.y, xy_im[k]));
      }
    }
  }

  // The products of the slice, added to the image (zeroed once a run), as 05.
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int jy = lane, jx = eighth + 8 * k;
    const size_t dst = size_t((jy + kN / 2) & (kN - 1)) * kN + ((jx + kN / 2) & (kN - 1));
    add_pixel_sums(image, s, pl, c, dst, xx[k], yy[k], xy_re[k], xy_im[k]);
  }
}

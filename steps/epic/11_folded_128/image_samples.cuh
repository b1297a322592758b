// Row round one (thread n2 of the row's eight), in place: the 16-point DFT over n1 of x = 8 n1 +
// n2 and the twiddle e^{2 pi i n2 k1 / 128}, written back at 8 k1 + n2. Element 8 n1 + n2 is read
// only where bit n1 of `occupied` is set (an empty column is zero, and B's copy of it stale).
__device__ __forceinline__ void row_round_one(Pair* line, int n2, unsigned occupied) {
  Pair v[16];
#pragma unroll
  for (int n1 = 0; n1 < 16; ++n1)
    v[n1] = occupied >> n1 & 1 ? line[8 * n1 + n2] : Pair{__float2half2_rn(0.f), __float2half2_rn(0.f)};
  dft16(v);
  line[n2] = v[0];  // k1 = 0: the twiddle is 1
#pragma unroll
  for (int k1 = 1; k1 < 16; ++k1) line[8 * k1 + n2] = twiddle(v[k1], n2 * k1);
}

// A block images one (channel, part, slice of the samples), in trips of two samples. Roles:
//   columns, round one: item i (i = lane, lane + 64, ...; lane = thread % 64) of the trip's
//     2 x occupied folded columns, thread n2 = thread / 64 of its eight: gathers the folded
//     cells 8 n1 + n2 (n1 < 4) in float, rounds them to pairs, a 4-point DFT, the twiddle
//     e^{2 pi i n2 k1 / 32}, into A at 8 k1 + n2;
//   columns, round two: item i, thread k1 < 4: the 8-point DFT of A's 8 k1 .. 8 k1 + 7, output
//     row j = k1 + 4 k2 of the sample's B, at the item's column;
//   rows, round one: (sample, row j = thread % 32, n2 = thread / 32 % 8): 16 x 8, in place;
//   rows, round two: (row j = thread % 32, k1 = thread / 32 < 16), each sample of the trip: the
//     8-point DFT of 8 k1 .. 8 k1 + 7, pixels (4 j + part, k1 + 16 k2), products summed.
// Three barriers a trip.
__global__ void __launch_bounds__(kThreads, 1)
    image_samples(Shape s, int samples, int per_slice, ProductList pl, const uint8_t* __restrict__ volts,
                  const int32_t* __restrict__ column_order, const int32_t* __restrict__ occupied_columns,
                  const Entry* __restrict__ entries, const int32_t* __restrict__ entry_first,
                  const uint2* __restrict__ entry_ends, int a_row, float* image) {
  constexpr int kTrip = 2, kB = kRows * kRow;
  extern __shared__ Pair shared[];
  Pair* const grid_b = shared;                     // kTrip x kRows padded rows
  Pair* const grid_a = shared + kTrip * kB;        // kRows x a_row items
  float4* const fields = reinterpret_cast<float4*>(grid_a + kRows * a_row);  // 2 trips x kTrip x stands
  const int c = blockIdx.x / kParts, part = blockIdx.x % kParts;
  const int first = blockIdx.y * per_slice, last = min(samples, first + per_slice);
  const int lane = threadIdx.x % 64, eighth = threadIdx.x / 64, pols = s.pols;
  const int sample_bytes = s.stands * pols;
  const uint8_t* channel_bytes = volts + size_t(c) * sample_bytes;  // + t * channels * sample_bytes
  const size_t sample_stride = size_t(s.channels) * sample_bytes;
  const int occupied = __ldg(occupied_columns + c);
  const int32_t* columns = column_order + size_t(c) * kN;
  // Rows: this thread's row and eighth; bit n1 of row_mask: column 8 n1 + n2 holds a stand.
  const int j = threadIdx.x % 32, row_n2 = threadIdx.x / 32 % 8, row_sample = threadIdx.x / 256, k1 = threadIdx.x / 32;
  unsigned row_mask = 0;
  for (int ci = 0; ci < occupied; ++ci) {
    const int x = __ldg(columns + ci);
    if (x % 8 == row_n2) row_mask |= 1u << (x / 8);
  }

  // Thread a fetches stand a's bytes of a trip's samples two trips ahead and stages them
  // decoded one trip ahead (07's).
  uint32_t ahead[kTrip] = {0, 0};
  auto fetch = [&](int t) {
#pragma unroll
    for (int k = 0; k < kTrip; ++k)
      if (int(threadIdx.x) < s.stands && t + k < last) {
        const uint8_t* b = channel_bytes + size_t(t + k) * sample_stride + threadIdx.x * pols;
        ahead[k] = pols > 1 ? *reinterpret_cast<const uint16_t*>(b) : *b;
      }
  };
  auto stage = [&](int t) {
    float4* to = fields + ((t - first) / kTrip & 1) * kTrip * s.stands;
    if (int(threadIdx.x) < s.stands)
#pragma unroll
      for (int k = 0; k < kTrip; ++k) to[k * s.stands + threadIdx.x] = decode_stand(ahead[k], pols);
  };
  fetch(first);
  stage(first);
  fetch(first + kTrip);
  __syncthreads();

  float xx[8] = {}, yy[8] = {}, xy_re[8] = {}, xy_im[8] = {};  // pixel (4 j + part, k1 + 16 k)
  for (int t = first; t < last; t += kTrip) {
    const int count = min(kTrip, last - t), items = count * occupied;  // samples, column transforms
    // Columns, round one: gather the four folded cells in float (complex weights), round each
    // to a pair of half2, a 4-point DFT and the twiddle.
    const float4* now = fields + ((t - first) / kTrip & 1) * kTrip * s.stands;
    for (int i = lane; i < items; i += 64) {
      const int sample = i >= occupied, ci = i - sample * occupied;
      const size_t thread = ((size_t(c) * kParts + part) * kN + ci) * 8 + eighth;
      const Entry* run = entries + __ldg(entry_first + thread);
      const uint2 ends = __ldg(entry_ends + thread);
      const float4* f_of = now + sample * s.stands;
      Pair v[4];
#pragma unroll
      for (int n1 = 0; n1 < 4; ++n1) {
        const int from = n1 > 0 ? cell_end(ends, n1 - 1) : 0, to = cell_end(ends, n1);
        float4 xy = make_float4(0, 0, 0, 0);  // X.re, X.im, Y.re, Y.im
        for (int e = from; e < to; ++e) {
          const Entry en = run[e];
          const float4 f = f_of[en.stand];
          xy.x += en.re * f.x - en.im * f.y, xy.y += en.re * f.y + en.im * f.x;
          xy.z += en.re * f.z - en.im * f.w, xy.w += en.re * f.w + en.im * f.z;
        }
        v[n1] = {__floats2half2_rn(xy.x, xy.z), __floats2half2_rn(xy.y, xy.w)};
      }
      dft4(v[0], v[1], v[2], v[3]);
#pragma unroll
      for (int q = 0; q < 4; ++q)  // e^{2 pi i n2 k1 / 32}, 1 for k1 = 0
        grid_a[(8 * q + eighth) * a_row + i] = q == 0 ? v[0] : twiddle(v[q], 4 * eighth * q);
    }
    if (t + kTrip < last) stage(t + kTrip);
    fetch(t + 2 * kTrip);
    __syncthreads();

    // Columns, round two (threads of eighth < 4): A's item -> its column of the sample's B.
    if (eighth < 4)
      for (int i = lane; i < items; i += 64) {
        const int sample = i >= occupied, x = __ldg(columns + i - sample * occupied);
        Pair v[8];
#pragma unroll
        for (int n2 = 0; n2 < 8; ++n2) v[n2] = grid_a[(8 * eighth + n2) * a_row + i];
        dft8(v);
#pragma unroll
        for (int k2 = 0; k2 < 8; ++k2) grid_b[sample * kB + (eighth + 4 * k2) * kRow + x] = v[k2];
      }
    __syncthreads();

    // Rows, round one, in place; round two into registers, then the products in float:
    // X = (re.x, im.x), Y = (re.y, im.y).
    if (row_sample < count) row_round_one(grid_b + row_sample * kB + j * kRow, row_n2, row_mask);
    __syncthreads();
    for (int sample = 0; sample < count; ++sample) {
      Pair v[8];
#pragma unroll
      for (int m = 0; m < 8; ++m) v[m] = grid_b[sample * kB + j * kRow + 8 * k1 + m];
      dft8(v);
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
    const int jy = kParts * j + part, jx = k1 + 16 * k;
    const size_t dst = size_t((jy + kN / 2) & (kN - 1)) * kN + ((jx + kN / 2) & (kN - 1));
    add_pixel_sums(image, s, pl, c, dst, xx[k], yy[k], xy_re[k], xy_im[k]);
  }
}

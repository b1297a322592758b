constexpr int kMaxChunks = kN / 8;  // occupied rows or columns in chunks of 8: at most 8 chunks
constexpr int kMaxItems = kMaxChunks * kMaxChunks * 32;  // gather items of a channel (a lane a cell pair)
constexpr uint32_t kNegate = 0x80008000u;  // the sign bits of both halves of a half2

// d += a b for a 16 x 8 tile d (float), a 16 x 16 tile of a and a 16 x 8 tile of b (half, two a
// register, the lower k in the low half); g = lane / 4, t = lane % 4:
//   a[0] = A[g][2t, 2t + 1], a[1] = A[g + 8][2t, 2t + 1], a[2] = A[g][2t + 8, 2t + 9], a[3] = A[g + 8][2t + 8, 2t + 9]
//   b[0] = B[2t, 2t + 1][g], b[1] = B[2t + 8, 2t + 9][g]
//   d[0] = D[g][2t], d[1] = D[g][2t + 1], d[2] = D[g + 8][2t], d[3] = D[g + 8][2t + 1]
// (PTX ISA, "Matrix Fragments for mma.m16n8k16", .f16). With k ordered as a chunk's 8 real parts
// and then its 8 imaginary parts, a[0], a[1] multiply the real parts of b and a[2], a[3] the
// imaginary ones.
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// Two floats rounded to half in one register, `lo` in the low half.
__host__ __device__ inline uint32_t pack(float lo, float hi) {
  const half2 h = __floats2half2_rn(lo, hi);
  uint32_t bits;
  memcpy(&bits, &h, sizeof bits);
  return bits;
}

// The kernel, for at most kRC chunks of occupied rows and kCC of occupied columns (the registers
// that hold the DFT matrices' fragments are sized by them). Warp w works on image rows
// 16 (w % 4) .. + 15 (its row tile, `tile`) in both products, with w / 4 (`group`) choosing
// which column tiles of H it computes and which 16 image columns of F it holds.
template <int kRC, int kCC>
__global__ void __launch_bounds__(kThreads, 1)
    image_samples(Shape s, int samples, int per_slice, ProductList pl, const uint8_t* __restrict__ volts,
                  const int2* __restrict__ chunks, const int2* __restrict__ entries,
                  const int32_t* __restrict__ item_first, const uint32_t* __restrict__ item_ends,
                  const uint4* __restrict__ column_dft, const uint2* __restrict__ row_dft, float* image) {
  constexpr int kHWords = 4 * 2 * kCC * 32;    // uint4: (row tile, pol, column chunk, lane)
  constexpr int kGWords = 2 * kCC * kRC * 32;  // uint2: (pol, column chunk, row chunk, lane)
  extern __shared__ uint4 shared[];
  uint4* const h_grid = shared;                                                   // two samples' H
  uint2* const g_grid = reinterpret_cast<uint2*>(h_grid + 2 * kHWords);           // two samples' G
  float4* const fields = reinterpret_cast<float4*>(g_grid + 2 * kGWords);         // two samples x stands
  const int c = blockIdx.x, first = blockIdx.y * per_slice, last = min(samples, first + per_slice);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, tile = warp % 4, group = warp / 4;
  const int pols = s.pols, sample_bytes = s.stands * pols;
  const uint8_t* channel_bytes = volts + size_t(c) * sample_bytes;  // + t * channels * sample_bytes
  const size_t sample_stride = size_t(s.channels) * sample_bytes;
  const int2 rc_cc = __ldg(chunks + c);
  const int rc = rc_cc.x, cc = rc_cc.y, items = cc * rc * 32;

  // The DFT matrices' fragments, the same for every sample of the channel: held in registers.
  // Columns (A of H = W_col G): row tile `tile`, chunk k, in H_re's form [W_re | -W_im]; H_im's
  // [W_im | W_re] is two sign flips and a swap away. Rows (B of F = H W_row^T): image columns
  // 8 (2 group + i) .., chunk d, in F_re's form [W_re ; -W_im]; F_im's [W_im ; W_re] likewise.
  uint32_t w_col[kRC][4], w_row[2][kCC][2];
#pragma unroll
  for (int k = 0; k < kRC; ++k) {
    const uint4 a = k < rc ? __ldg(column_dft + ((size_t(c) * 4 + tile) * kMaxChunks + k) * 32 + lane) : uint4{};
    w_col[k][0] = a.x, w_col[k][1] = a.y, w_col[k][2] = a.z, w_col[k][3] = a.w;
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int d = 0; d < kCC; ++d) {
      const uint2 b = d < cc ? __ldg(row_dft + ((size_t(c) * 8 + 2 * group + i) * kMaxChunks + d) * 32 + lane) : uint2{};
      w_row[i][d][0] = b.x, w_row[i][d][1] = b.y;
    }

  // Thread a fetches stand a's bytes two samples ahead and stages them decoded one sample ahead.
  uint32_t ahead = 0;
  auto fetch = [&](int t) {
    if (int(threadIdx.x) < s.stands && t < last) {
      const uint8_t* b = channel_bytes + size_t(t) * sample_stride + threadIdx.x * pols;
      ahead = pols > 1 ? *reinterpret_cast<const uint16_t*>(b) : *b;
    }
  };
  auto stage = [&](int t) {
    if (int(threadIdx.x) < s.stands) fields[((t - first) & 1) * s.stands + threadIdx.x] = decode_stand(ahead, pols);
  };
  // Sample t's grid, from its staged fields: item (column chunk d, row chunk k, lane 4 g + t')
  // sums the cells of rows 8 k + 2 t' and + 1 of occupied column 8 d + g, and stores them as
  // the lane's B fragment of the column product: (re, re), (im, im) of the two rows, per pol.
  auto gather = [&](int t) {
    const float4* f = fields + ((t - first) & 1) * s.stands;
    uint2* g = g_grid + ((t - first) & 1) * kGWords;
    for (int item = threadIdx.x; item < items; item += kThreads) {
      const size_t at = size_t(c) * kMaxItems + item;
      const int2* run = entries + __ldg(item_first + at);
      const uint32_t ends = __ldg(item_ends + at);
      const int mid = int(ends & 0xffff), end = int(ends >> 16);
      float4 lo = make_float4(0, 0, 0, 0), hi = make_float4(0, 0, 0, 0);  // (X.re, X.im, Y.re, Y.im)
      for (int e = 0; e < mid; ++e) {
        const int2 entry = run[e];
        const float w = __int_as_float(entry.y);
        const float4 v = f[entry.x];
        lo.x += w * v.x, lo.y += w * v.y, lo.z += w * v.z, lo.w += w * v.w;
      }
      for (int e = mid; e < end; ++e) {
        const int2 entry = run[e];
        const float w = __int_as_float(entry.y);
        const float4 v = f[entry.x];
        hi.x += w * v.x, hi.y += w * v.y, hi.z += w * v.z, hi.w += w * v.w;
      }
      g[item] = make_uint2(pack(lo.x, hi.x), pack(lo.y, hi.y));          // X
      g[items + item] = make_uint2(pack(lo.z, hi.z), pack(lo.w, hi.w));  // Y
    }
  };
  // The column product of sample t: H(image row, occupied column) for the warp's row tile and
  // column tiles nt = group, group + 4, ... of (pol, column chunk); H_re and H_im of a tile are
  // exactly the lane's A fragment of the row product for that chunk, stored as one uint4.
  auto columns = [&](int t) {
    const uint2* g = g_grid + ((t - first) & 1) * kGWords;
    uint4* h = h_grid + ((t - first) & 1) * kHWords;
    for (int nt = group; nt < 2 * cc; nt += 4) {
      float re[4] = {0, 0, 0, 0}, im[4] = {0, 0, 0, 0};
#pragma unroll
      for (int k = 0; k < kRC; ++k)
        if (k < rc) {
          const uint2 gk = g[(nt * rc + k) * 32 + lane];
          const uint32_t b[2] = {gk.x, gk.y};
          const uint32_t a_im[4] = {w_col[k][2] ^ kNegate, w_col[k][3] ^ kNegate, w_col[k][0], w_col[k][1]};
          mma(re, w_col[k], b);  // H_re = W_re G_re - W_im G_im
          mma(im, a_im, b);        // H_im = W_im G_re + W_re G_im
        }
      const int pol = nt >= cc, d = nt - pol * cc;
      h[((tile * 2 + pol) * cc + d) * 32 + lane] =
          make_uint4(pack(re[0], re[1]), pack(re[2], re[3]), pack(im[0], im[1]), pack(im[2], im[3]));
    }
  };

  fetch(first);
  stage(first);
  fetch(first + 1);
  __syncthreads();
  gather(first);
  if (first + 1 < last) stage(first + 1);
  fetch(first + 2);
  __syncthreads();

  // Sums of pixel (16 tile + g + 8 (e / 2), 8 (2 group + i) + 2 t + e % 2) at [4 i + e].
  float xx[8] = {}, yy[8] = {}, xy_re[8] = {}, xy_im[8] = {};
  for (int t = first; t < last; ++t) {
    // One barrier a sample: G, H and the fields are double buffered. Before it, sample t's
    // column product, sample t + 1's grid, sample t + 2's fields and sample t + 3's bytes;
    // after it, sample t's row product, which reads the H the other warps of the tile wrote.
    columns(t);
    if (t + 1 < last) gather(t + 1);
    if (t + 2 < last) stage(t + 2);
    fetch(t + 3);
    __syncthreads();

    const uint4* h = h_grid + ((t - first) & 1) * kHWords;
    float f[2][4][4] = {};  // [i][X re, X im, Y re, Y im][element]
#pragma unroll
    for (int d = 0; d < kCC; ++d)
      if (d < cc) {
        const uint4 hx = h[((tile * 2 + 0) * cc + d) * 32 + lane], hy = h[((tile * 2 + 1) * cc + d) * 32 + lane];
        const uint32_t ax[4] = {hx.x, hx.y, hx.z, hx.w}, ay[4] = {hy.x, hy.y, hy.z, hy.w};
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const uint32_t b_im[2] = {w_row[i][d][1] ^ kNegate, w_row[i][d][0]};
          mma(f[i][0], ax, w_row[i][d]);  // F_re = H_re W_re - H_im W_im
          mma(f[i][1], ax, b_im);           // F_im = H_re W_im + H_im W_re
          mma(f[i][2], ay, w_row[i][d]);
          mma(f[i][3], ay, b_im);
        }
      }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float xr = f[i][0][e], xi = f[i][1][e], yr = f[i][2][e], yi = f[i][3][e];
        const int k = 4 * i + e;
        xx[k] = fmaf(xr, xr, fmaf(xi, xi, xx[k]));
        yy[k] = fmaf(yr, yr, fmaf(yi, yi, yy[k]));
        xy_re[k] = fmaf(xr, yr, fmaf(xi, yi, xy_re[k]));
        xy_im[k] = fmaf(xi, yr, fmaf(-xr, yi, xy_im[k]));
      }
  }

  // The products of the slice, added to the image (zeroed once a run), as 05. The DFT matrices
  // put image row and column m, l at matrix row and column m, l: no shift here.
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int row = 16 * tile + lane / 4 + 8 * (k % 4 / 2), column = 8 * (2 * group + k / 4) + 2 * (lane % 4) + k % 2;
    add_pixel_sums(image, s, pl, c, size_t(row) * kN + column, xx[k], yy[k], xy_re[k], xy_im[k]);
  }
}

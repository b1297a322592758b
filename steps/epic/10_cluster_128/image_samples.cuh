__device__ __forceinline__ void dft16(float2 (&v)[16]) {  // two 8-point DFTs and e^{2 pi i k/16}
  float2 e[8], o[8];
#pragma unroll
  for (int n = 0; n < 8; ++n) e[n] = v[2 * n], o[n] = v[2 * n + 1];
  dft8(e);
  dft8(o);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float2 w = c_twiddle[8 * k];  // e^{2 pi i k / 16} = e^{2 pi i 8k / 128}
    const float2 t = mul(o[k], w);
    v[k] = add(e[k], t), v[k + 8] = sub(e[k], t);
  }
}

// A 128-point transform as 16 x 8: with e = 8 n1 + n2 (n1 < 16, n2 < 8) and k = k1 + 16 k2,
//   X[k1 + 16 k2] = sum_n2 e^{2 pi i n2 k2 / 8} [ e^{2 pi i n2 k1 / 128} sum_n1 x[8 n1 + n2] e^{2 pi i n1 k1 / 16} ].
// Round one (thread n2, eight per transform) holds x[8 n1 + n2] for all n1 and leaves
// Y[k1] at 8 k1 + n2; round two (thread k1, sixteen per transform) reads 8 k1 .. 8 k1 + 7.
__device__ __forceinline__ void round_one(float2 (&v)[16], int n2) {
  dft16(v);
#pragma unroll
  for (int k1 = 0; k1 < 16; ++k1) v[k1] = mul(v[k1], c_twiddle[n2 * k1]);
}

// Thread roles, per sample:
//   columns, round one: (column c < 32, n2 < 8, pol p < 2) = 512: gathers its 16 cells
//   columns, round two: (column c, k1 < 16) = 512, both polarizations
//   rows, round one:    (row r < 32, n2, pol p) = 512: reads its 16 cells from the cluster
//   rows, round two:    (row r, k1) = 512, both polarizations; keeps 8 pixels' sums
// In every role the warp's 32 threads are 32 adjacent columns or 32 rows: the padded strides
// make every shared-memory access conflict-free.
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads, 1)
    image_samples(Shape s, int samples, int per_slice, ProductList pl, const uint8_t* __restrict__ volts,
                  const int32_t* __restrict__ cell_start, const int2* __restrict__ cell_entry, float* image) {
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ float2 shared[];
  float2* const grid_t = shared;              // 2 x kT
  float2* const grid_a = shared + 2 * kT;     // 2 x kA
  float2* const grid_b = grid_a + 2 * kA;     // 2 x kB
  uint8_t* const bytes = reinterpret_cast<uint8_t*>(grid_b + 2 * kB);  // 2 x kMaxBytes
  const int part = int(cluster.block_rank());  // this block's quarter: columns, then rows
  const int c = blockIdx.x / kCluster, first = blockIdx.y * per_slice, last = min(samples, first + per_slice);
  const int pols = s.pols, sample_bytes = s.stands * pols;
  const uint8_t* channel_bytes = volts + size_t(c) * sample_bytes;
  const size_t sample_stride = size_t(s.channels) * sample_bytes, nn = size_t(kN) * kN;
  const float2* cluster_a[kCluster];  // each block's A, in this block's view of the cluster
#pragma unroll
  for (int b = 0; b < kCluster; ++b) cluster_a[b] = cluster.map_shared_rank(grid_a, b);

  const int i32 = threadIdx.x % 32, n2 = (threadIdx.x / 32) % 8, p = threadIdx.x / 256, k1 = threadIdx.x / 32;
  const int column = part * kPart + i32;  // role: columns, round one and two
  const int row = part * kPart + i32;     // role: rows (the global row)
  const int32_t* my_lists = cell_start + size_t(c) * nn + size_t(n2) * kN + column;  // + 8 n1 rows

  uint8_t ahead[kMaxBytes / kThreads];
  auto fetch = [&](int t) {
#pragma unroll
    for (int k = 0; k < kMaxBytes / kThreads; ++k) {
      const int e = threadIdx.x + k * kThreads;
      if (e < sample_bytes && t < last) ahead[k] = channel_bytes[size_t(t) * sample_stride + e];
    }
  };
  auto stage = [&](int t) {
#pragma unroll
    for (int k = 0; k < kMaxBytes / kThreads; ++k) {
      const int e = threadIdx.x + k * kThreads;
      if (e < sample_bytes) bytes[(t & 1) * kMaxBytes + e] = ahead[k];
    }
  };
  fetch(first);
  stage(first);
  fetch(first + 1);
  cluster.sync();  // the staged bytes, and every block of the cluster running before any reads another

  float xx[8] = {}, yy[8] = {}, xy_re[8] = {}, xy_im[8] = {};  // pixel (row, column k1 + 16 k)
  for (int t = first; t < last; ++t) {
    // Columns, round one: gather 16 cells of column `column`, pol p, rows 8 n1 + n2.
    {
      const uint8_t* now = bytes + (t & 1) * kMaxBytes;
      float2 v[16];
#pragma unroll
      for (int n1 = 0; n1 < 16; ++n1) {
        float2 cell = make_float2(0, 0);
        if (p < pols) {
          const int from = __ldg(my_lists + 8 * n1 * kN), to = __ldg(my_lists + 8 * n1 * kN + 1);
          for (int e = from; e < to; ++e) {
            const int2 entry = cell_entry[e];  // (stand, weight)
            const float w = __int_as_float(entry.y);
            const uint8_t b = now[entry.x * pols + p];
            cell.x += w * float(nibble_re(b));
            cell.y += w * float(nibble_im(b));
          }
        }
        v[n1] = cell;
      }
      round_one(v, n2);
#pragma unroll
      for (int q = 0; q < 16; ++q) grid_t[p * kT + (8 * q + n2) * kRowT + i32] = v[q];
    }
    if (t + 1 < last) stage(t + 1);
    fetch(t + 2);
    __syncthreads();

    // Columns, round two: T -> A, natural order.
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      float2 v[8];
#pragma unroll
      for (int m = 0; m < 8; ++m) v[m] = grid_t[q * kT + (8 * k1 + m) * kRowT + i32];
      dft8(v);
#pragma unroll
      for (int k2 = 0; k2 < 8; ++k2) grid_a[q * kA + (k1 + 16 * k2) * kRowA + i32] = v[k2];
    }
    cluster.sync();  // every block's columns are done

    // Rows, round one: row `row`, pol p, cells 8 n1 + n2 from the block that owns that column.
    {
      float2 v[16];
#pragma unroll
      for (int n1 = 0; n1 < 16; ++n1) {
        const int x = 8 * n1 + n2;
        v[n1] = cluster_a[x / kPart][p * kA + row * kRowA + x % kPart];
      }
      round_one(v, n2);
#pragma unroll
      for (int q = 0; q < 16; ++q) grid_b[p * kB + i32 * kRowB + 8 * q + n2] = v[q];
    }
    cluster.sync();  // every remote read of A is done (A may be overwritten), and B is complete

    // Rows, round two: both polarizations into registers; multiply and accumulate.
    float2 f[2][8];
#pragma unroll
    for (int q = 0; q < 2; ++q) {
#pragma unroll
      for (int m = 0; m < 8; ++m) f[q][m] = grid_b[q * kB + i32 * kRowB + 8 * k1 + m];
      dft8(f[q]);
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float2 fx = f[0][k], fy = f[1][k];
      xx[k] += fx.x * fx.x + fx.y * fx.y;
      yy[k] += fy.x * fy.x + fy.y * fy.y;
      xy_re[k] += fx.x * fy.x + fx.y * fy.y;
      xy_im[k] += fx.y * fy.x - fx.x * fy.y;
    }
  }

  // The products of the slice, added to the image (zeroed once a run), as 03.
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int jy = row, jx = k1 + 16 * k;
    const size_t dst = size_t((jy + kN / 2) & (kN - 1)) * kN + ((jx + kN / 2) & (kN - 1));
    add_pixel_sums(image, s, pl, c, dst, xx[k], yy[k], xy_re[k], xy_im[k]);
  }
}

// epic 12_tensor_dft: 09's fused imaging, with the 2D transform of a sample as two complex matrix
// products on the tensor cores instead of an FFT in half2. One block per (channel, slice of the
// gulp's samples); for each of its samples the block
//   grids     the cells of the occupied rows and columns (about 30 x 28 of 64 x 64 at 38 MHz)
//             from their lists of (stand, weight), in float, rounded once to half and stored as
//             the tensor cores' operand fragments,
//   transforms the columns: H = W_col G, W_col the 64 x rows DFT matrix of the occupied rows
//             (every image row, the N/2 shift folded in), one mma.sync m16n8k16 per 16 x 8 x 16
//             piece, half operands, float sums; H is rounded to half and kept in shared memory,
//             already in the second product's fragment order,
//   transforms the rows: F = H W_row^T, W_row the DFT matrix of the occupied columns, the
//             tiles of F in each warp's registers, both polarizations at the same pixels,
//   multiplies the fields of the two polarizations at the pixels a thread holds and adds the
//             products to sums kept in registers,
// and after its last sample adds the sums to the image. A complex product is a real one of twice
// the depth: [H_re | H_im] = [W_re -W_im ; W_im W_re] [G_re ; G_im]. The occupied rows and columns
// come in chunks of 8, so that a chunk's real and imaginary parts fill one k = 16 step of the mma.
// The copy (second stream, two buffers), the autocorrelations and `finish` are 04's.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/device_array.cuh"
#include "epic/gpu.cuh"
#include "core/portable.hpp"
#include "epic/step.hpp"
#include "epic/voltage.hpp"

namespace epic {
namespace {

constexpr int kN = 64;              // the image this step makes: 64 x 64 (128 x 128 is 10's and 11's)
constexpr int kThreads = 512;       // 16 warps: 4 row tiles of 16 image rows x 4 groups
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

// What a channel's block reads besides the voltages, made once in load(): its chunk counts,
// the gather lists in the order of the column product's B fragments, and the two DFT matrices
// as the lanes' fragments, rounded once to half from double.
struct DftPlan {
  std::vector<int2> chunks;            // (channel): chunks of 8 occupied rows, of 8 occupied columns
  std::vector<int2> entry;             // (stand, the weight's float bits)
  std::vector<int32_t> first;          // (channel, item): the item's first entry
  std::vector<uint32_t> ends;          // (channel, item): its two cells' ends from `first`, 16 bits each
  std::vector<uint4> column_dft;       // (channel, row tile, row chunk, lane): A fragments, [W_re | -W_im]
  std::vector<uint2> row_dft;          // (channel, column tile, column chunk, lane): B fragments, [W_re ; -W_im]
  int rows_max = 0, columns_max = 0;   // occupied, in the busiest channel
};

DftPlan dft_plan(const Inputs& in) {
  const CellLists cl = make_cell_lists(in);
  const size_t nn = size_t(kN) * kN;
  DftPlan p;
  p.chunks.resize(size_t(in.channels));
  p.first.assign(size_t(in.channels) * kMaxItems, 0);
  p.ends.assign(size_t(in.channels) * kMaxItems, 0);
  p.column_dft.assign(size_t(in.channels) * 4 * kMaxChunks * 32, uint4{});
  p.row_dft.assign(size_t(in.channels) * 8 * kMaxChunks * 32, uint2{});
  // e^{+2 pi i k (m - N/2) / N}: grid row or column k seen at image row or column m, the
  // phase's numerator reduced modulo N in integers. Zero for the padding beyond the occupied.
  auto w = [](int k, int m, bool real) {
    const int turns = ((k * (m - kN / 2)) % kN + kN) % kN;
    const double phase = 2 * M_PI * turns / kN;
    return float(real ? std::cos(phase) : std::sin(phase));
  };
  for (int c = 0; c < in.channels; ++c) {
    auto list = [&](int y, int x) { return size_t(c) * nn + size_t(y) * kN + x; };
    std::vector<int> rows, columns;
    for (int k = 0; k < kN; ++k) {
      bool row = false, column = false;
      for (int j = 0; j < kN; ++j) {
        row = row || cl.start[list(k, j) + 1] > cl.start[list(k, j)];
        column = column || cl.start[list(j, k) + 1] > cl.start[list(j, k)];
      }
      if (row) rows.push_back(k);
      if (column) columns.push_back(k);
    }
    const int R = int(rows.size()), C = int(columns.size()), rc = (R + 7) / 8, cc = (C + 7) / 8;
    p.chunks[size_t(c)] = make_int2(rc, cc);
    p.rows_max = std::max(p.rows_max, R);
    p.columns_max = std::max(p.columns_max, C);
    for (int d = 0; d < cc; ++d)
      for (int k = 0; k < rc; ++k)
        for (int lane = 0; lane < 32; ++lane) {
          const int item = (d * rc + k) * 32 + lane, x = 8 * d + lane / 4;
          const size_t at = size_t(c) * kMaxItems + item;
          p.first[at] = int32_t(p.entry.size());
          uint32_t end[2];
          for (int h = 0; h < 2; ++h) {
            const int y = 8 * k + 2 * (lane % 4) + h;
            if (y < R && x < C)
              for (int32_t e = cl.start[list(rows[size_t(y)], columns[size_t(x)])];
                   e < cl.start[list(rows[size_t(y)], columns[size_t(x)]) + 1]; ++e) {
                int32_t bits;
                std::memcpy(&bits, &cl.weight[size_t(e)], sizeof bits);
                p.entry.push_back(make_int2(cl.stand[size_t(e)], bits));
              }
            end[h] = uint32_t(p.entry.size() - size_t(p.first[at]));  // <= 2 x 512 stands
          }
          p.ends[at] = end[0] | end[1] << 16;
        }
    // A of the column product, [W_re | -W_im] at image row m, occupied row r.
    auto col = [&](int m, int r, bool real) { return r < R ? (real ? 1.f : -1.f) * w(rows[size_t(r)], m, real) : 0.f; };
    for (int tile = 0; tile < 4; ++tile)
      for (int k = 0; k < rc; ++k)
        for (int lane = 0; lane < 32; ++lane) {
          const int m = 16 * tile + lane / 4, r = 8 * k + 2 * (lane % 4);
          p.column_dft[((size_t(c) * 4 + tile) * kMaxChunks + k) * 32 + lane] =
              make_uint4(pack(col(m, r, true), col(m, r + 1, true)), pack(col(m + 8, r, true), col(m + 8, r + 1, true)),
                         pack(col(m, r, false), col(m, r + 1, false)), pack(col(m + 8, r, false), col(m + 8, r + 1, false)));
        }
    // B of the row product, [W_re ; -W_im] at occupied column x, image column l.
    auto row = [&](int x, int l, bool real) { return x < C ? (real ? 1.f : -1.f) * w(columns[size_t(x)], l, real) : 0.f; };
    for (int tile = 0; tile < 8; ++tile)
      for (int d = 0; d < cc; ++d)
        for (int lane = 0; lane < 32; ++lane) {
          const int l = 8 * tile + lane / 4, x = 8 * d + 2 * (lane % 4);
          p.row_dft[((size_t(c) * 8 + tile) * kMaxChunks + d) * 32 + lane] =
              make_uint2(pack(row(x, l, true), row(x + 1, l, true)), pack(row(x, l, false), row(x + 1, l, false)));
        }
  }
  if (p.entry.empty()) p.entry.push_back(make_int2(0, 0));  // never read; keeps the upload non-empty
  return p;
}

class TensorDft final : public GpuStep {
 public:
  explicit TensorDft(long slices) : slices_(int(slices)) {}

  void load(const Inputs& in) override {
    if (in.image_size != kN)
      throw core::UsageError("12_tensor_dft images " + std::to_string(kN) + " x " + std::to_string(kN) + " (--image-size " +
                             std::to_string(in.image_size) + " is 10_cluster_128's)");
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    gulps_.load(in);  // pinned host copy, two device buffers of a gulp
    if (in.stands > kThreads)
      throw core::UsageError("12_tensor_dft decodes a stand a thread, at most " + std::to_string(kThreads) + " stands; " +
                             std::to_string(in.stands) + " is more");
    const DftPlan plan = dft_plan(in);
    chunks_.upload(plan.chunks.data(), plan.chunks.size());
    entries_.upload(plan.entry.data(), plan.entry.size());
    item_first_.upload(plan.first.data(), plan.first.size());
    item_ends_.upload(plan.ends.data(), plan.ends.size());
    column_dft_.upload(plan.column_dft.data(), plan.column_dft.size());
    row_dft_.upload(plan.row_dft.data(), plan.row_dft.size());
    rows_max_ = plan.rows_max, columns_max_ = plan.columns_max;
    // Up to 32 occupied rows and columns (LWA-SV at 38-41 MHz, support 2) the kernel built for
    // 4 chunks of each; beyond, the one built for 8 (more registers for the matrices' fragments).
    wide_ = rows_max_ > 32 || columns_max_ > 32;
    const int rc = wide_ ? 8 : 4, cc = rc;
    smem_ = size_t(2) * 4 * 2 * cc * 32 * sizeof(uint4) + size_t(2) * 2 * cc * rc * 32 * sizeof(uint2) +
            size_t(2) * in.stands * sizeof(float4);
    int device = 0, sms = 0, per_sm = 0, most = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (smem_ > size_t(most))
      throw core::UsageError("12_tensor_dft needs " + std::to_string(smem_) + " bytes of shared memory a block; this GPU gives a block at most " +
                             std::to_string(most));
    const void* kernel = wide_ ? (const void*)image_samples<8, 8> : (const void*)image_samples<4, 4>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    // Slices per channel: enough blocks for every SM to hold as many as it can at once.
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem_));
    blocks_per_sm_ = per_sm;
    slices_used_ = slices_ > 0 ? slices_ : (sms * std::max(per_sm, 1) + in.channels - 1) / in.channels;
    slices_used_ = std::min(slices_used_, in.samples_per_gulp);
  }

  void compute() override {
    timer_.reset();
    const ProductList pl = product_list(in_);
    const int samples = in_.samples_per_gulp, per_slice = (samples + slices_used_ - 1) / slices_used_;
    const dim3 grid(unsigned(in_.channels), unsigned((samples + per_slice - 1) / per_slice));
    CUDA_CHECK(cudaMemsetAsync(image_.data(), 0, image_.size() * sizeof(float)));  // 13 MB, once a run
    gulps_.copy(0, timer_);
    for (int g = 0; g < in_.gulps; ++g) {
      if (g + 1 < in_.gulps) gulps_.copy(g + 1, timer_);  // overlaps this gulp's work
      const uint8_t* volts = gulps_.wait(g);
      timer_.begin("image");
      wide_ ? launch<8, 8>(grid, samples, per_slice, pl, volts) : launch<4, 4>(grid, samples, per_slice, pl, volts);
      CUDA_CHECK_LAUNCH();
      timer_.end();
      if (in_.remove_autos) {
        timer_.begin("autos");
        accumulate_autos<<<blocks(size_t(in_.channels) * in_.stands, 256), 256>>>(s_, samples, g == 0, volts, autos_.data());
        CUDA_CHECK_LAUNCH();
        timer_.end();
      }
      gulps_.consumed(g);  // the image and autos kernels have read gulp g's buffer
    }
    finish(pl, 256);
  }

  void describe(core::Fields& params) const override {
    params.set("slices", slices_used_);  // blocks per channel
    params.set("threads", kThreads);
    params.set("blocks_per_sm", blocks_per_sm_);
    params.set("shared_bytes", smem_);
    params.set("occupied_rows_max", rows_max_);        // of kN, in the busiest channel
    params.set("occupied_columns_max", columns_max_);
    params.set("chunks_built_for", wide_ ? 8 : 4);     // the kernel's row and column chunks of 8
    params.set("mma", "m16n8k16.f32.f16.f16.f32");
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  template <int kRC, int kCC>
  void launch(dim3 grid, int samples, int per_slice, const ProductList& pl, const uint8_t* volts) {
    image_samples<kRC, kCC><<<grid, kThreads, smem_>>>(s_, samples, per_slice, pl, volts, chunks_.data(), entries_.data(),
                                                       item_first_.data(), item_ends_.data(), column_dft_.data(),
                                                       row_dft_.data(), image_.data());
  }

  int slices_, slices_used_ = 1, blocks_per_sm_ = 0, rows_max_ = 0, columns_max_ = 0;
  bool wide_ = false;
  size_t smem_ = 0;
  GulpStream gulps_;  // 04's: gulp g + 1's copy beside gulp g's kernels
  core::DeviceArray<int2> chunks_, entries_;
  core::DeviceArray<int32_t> item_first_;
  core::DeviceArray<uint32_t> item_ends_;
  core::DeviceArray<uint4> column_dft_;
  core::DeviceArray<uint2> row_dft_;
};

}  // namespace

StepInfo step_info() {
  return {"12_tensor_dft", "GPU, fused as 09, each sample's 2D transform as two complex matrix products on the tensor cores "
                           "(mma.sync, half operands, float sums)",
          true, Accuracy::half,
          {{"slices", 0, 0, 1000, "Blocks per channel, each imaging a share of a gulp's samples (0: enough to fill every SM)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<TensorDft>(core::tunable(t, "slices")); }

}  // namespace epic

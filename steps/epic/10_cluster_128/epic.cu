// epic 10_cluster_128: 05's fused imaging at 128 x 128, where one image no longer fits one
// block: a 128 x 128 grid of two polarizations is 256 KB, more than an SM's 227 KB of shared
// memory. A thread-block cluster of four blocks (four SMs) images one (channel, slice): each
// block owns a quarter of the columns for the column transforms and a quarter of the rows for
// the row transforms, and the one exchange between the two, the transpose, goes through
// distributed shared memory: a block reads the other three blocks' shared memory directly.
// Per sample, each block
//   grids     its 32 columns from the cell lists (05's gather), a polarization per thread,
//   transforms them (128 = 16 x 8: a 16-point DFT in registers, twiddles, an exchange through
//             its own shared memory, an 8-point DFT) into grid A, its quarter of the columns,
//   waits     for the cluster (cluster.sync: every block's A is complete),
//   transforms its 32 rows, reading each row's 128 cells from the four blocks' A,
//   waits     for the cluster again (no block overwrites its A while another may read it),
//   multiplies and accumulates in registers, as 03.
// The copy, the autocorrelations and `finish` are 04's.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

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

namespace cg = cooperative_groups;

constexpr int kN = 128;                  // the image this step makes: 128 x 128
constexpr int kCluster = 4;              // blocks per image
constexpr int kPart = kN / kCluster;     // columns (then rows) a block owns: 32
constexpr int kThreads = 512;
constexpr int kMaxBytes = 2 * kThreads;  // a sample's voltage bytes (stands x pols) a block stages
// Shared memory, float2 cells, per polarization: T (the columns between their two rounds),
// A (the transformed columns, read by the whole cluster; rows padded to 33 so that 32 threads
// reading 32 rows at one column hit 32 banks), B (the rows between their two rounds; padded).
constexpr int kRowT = kPart, kRowA = kPart + 1, kRowB = kN + 1;
constexpr int kT = kN * kRowT, kA = kN * kRowA, kB = kPart * kRowB;

// e^{+2 pi i m / 128}: the inverse transform's twiddles, made in double on the host.
__constant__ float2 c_twiddle[kN];

__device__ __forceinline__ float2 add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float2 sub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ float2 mul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

// 4-, 8- and 16-point inverse DFTs in registers, natural order: X[k] = sum_n x[n] e^{+2 pi i nk/M}.
__device__ __forceinline__ void dft4(float2& a0, float2& a1, float2& a2, float2& a3) {
  const float2 t0 = add(a0, a2), t1 = sub(a0, a2), t2 = add(a1, a3), d = sub(a1, a3);
  const float2 t3 = make_float2(-d.y, d.x);  // i (a1 - a3)
  a0 = add(t0, t2), a1 = add(t1, t3), a2 = sub(t0, t2), a3 = sub(t1, t3);
}
__device__ __forceinline__ void dft8(float2 (&v)[8]) {
  float2 e0 = v[0], e1 = v[2], e2 = v[4], e3 = v[6], o0 = v[1], o1 = v[3], o2 = v[5], o3 = v[7];
  dft4(e0, e1, e2, e3);
  dft4(o0, o1, o2, o3);
  const float h = 0.70710678118654752f;  // e^{i pi/4} = h (1 + i)
  o1 = make_float2(h * (o1.x - o1.y), h * (o1.x + o1.y));
  o2 = make_float2(-o2.y, o2.x);
  o3 = make_float2(-h * (o3.x + o3.y), h * (o3.x - o3.y));
  v[0] = add(e0, o0), v[4] = sub(e0, o0);
  v[1] = add(e1, o1), v[5] = sub(e1, o1);
  v[2] = add(e2, o2), v[6] = sub(e2, o2);
  v[3] = add(e3, o3), v[7] = sub(e3, o3);
}
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

class Cluster final : public GpuStep {
 public:
  explicit Cluster(long slices) : slices_(int(slices)) {}

  void load(const Inputs& in) override {
    if (in.image_size != kN)
      throw core::UsageError("10_cluster_128 images " + std::to_string(kN) + " x " + std::to_string(kN) + " (--image-size " +
                             std::to_string(in.image_size) + " is 05_fused's to 09_fused_half's)");
    load_image(in);  // GpuStep's: the inputs kept, the image, autos, weights and correction on the device
    gulps_.load(in);  // pinned host copy, two device buffers of a gulp
    if (in.stands * in.pols > kMaxBytes)
      throw core::UsageError("10_cluster_128 stages at most " + std::to_string(kMaxBytes) + " voltage bytes a sample (stands x pols); " +
                             std::to_string(in.stands) + " stands x " + std::to_string(in.pols) + " pols is more");
    const CellLists lists = make_cell_lists(in);  // 02's lists, one (stand, weight) entry in 8 bytes
    const std::vector<int2> entry = packed_entries(lists);
    cell_start_.upload(lists.start.data(), lists.start.size());
    cell_entry_.upload(entry.data(), entry.size());

    float2 twiddle[kN];
    for (int m = 0; m < kN; ++m) {
      const double phase = 2 * M_PI * m / kN;
      twiddle[m] = make_float2(float(std::cos(phase)), float(std::sin(phase)));
    }
    CUDA_CHECK(cudaMemcpyToSymbol(c_twiddle, twiddle, sizeof(twiddle)));

    // Shared memory per block, both polarizations always (with one, Y stays zero): T, A, B and
    // two samples' bytes, 201,216 bytes: one block per SM, four SMs per image.
    smem_ = 2 * size_t(kT + kA + kB) * sizeof(float2) + 2 * kMaxBytes;
    const void* kernel = (const void*)image_samples;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    // Slices per channel: enough clusters for every SM to hold as many blocks as it can.
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem_));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(kCluster * unsigned(in.channels), 1, 1);
    config.blockDim = dim3(kThreads, 1, 1);
    config.dynamicSmemBytes = smem_;
    cudaLaunchAttribute cluster_dims;
    cluster_dims.id = cudaLaunchAttributeClusterDimension;
    cluster_dims.val.clusterDim.x = kCluster, cluster_dims.val.clusterDim.y = 1, cluster_dims.val.clusterDim.z = 1;
    config.attrs = &cluster_dims;
    config.numAttrs = 1;
    int clusters = 0;  // clusters of four such blocks the GPU can hold at once
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    if (clusters < 1) throw core::RuntimeError("10_cluster_128: this GPU cannot hold a cluster of four blocks of " +
                                               std::to_string(smem_) + " bytes of shared memory");
    clusters_ = clusters;
    slices_used_ = slices_ > 0 ? slices_ : (clusters + in.channels - 1) / in.channels;
    blocks_per_sm_ = per_sm;
    slices_used_ = std::min(slices_used_, in.samples_per_gulp);
  }

  void compute() override {
    timer_.reset();
    const ProductList pl = product_list(in_);
    const int samples = in_.samples_per_gulp, per_slice = (samples + slices_used_ - 1) / slices_used_;
    const dim3 grid(kCluster * unsigned(in_.channels), unsigned((samples + per_slice - 1) / per_slice));
    CUDA_CHECK(cudaMemsetAsync(image_.data(), 0, image_.size() * sizeof(float)));  // 13 MB, once a run
    gulps_.copy(0, timer_);
    for (int g = 0; g < in_.gulps; ++g) {
      if (g + 1 < in_.gulps) gulps_.copy(g + 1, timer_);  // overlaps this gulp's work
      const uint8_t* volts = gulps_.wait(g);
      timer_.begin("image");
      image_samples<<<grid, kThreads, smem_>>>(s_, samples, per_slice, pl, volts, cell_start_.data(), cell_entry_.data(),
                                               image_.data());
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
    params.set("cluster", kCluster);
    params.set("clusters_resident", clusters_);
    params.set("shared_bytes", smem_);
    GpuStep::describe(params);  // the phase breakdown
  }

 private:
  int slices_, slices_used_ = 1, blocks_per_sm_ = 0, clusters_ = 0;
  size_t smem_ = 0;
  GulpStream gulps_;  // 04's: gulp g + 1's copy beside gulp g's kernels
  core::DeviceArray<int32_t> cell_start_;
  core::DeviceArray<int2> cell_entry_;
};

}  // namespace

StepInfo step_info() {
  return {"10_cluster_128", "GPU, 128 x 128 fused: a cluster of four blocks shares each image's FFT through distributed shared memory",
          true, Accuracy::fp32,
          {{"slices", 0, 0, 1000, "Clusters per channel, each imaging a share of a gulp's samples (0: enough to fill every SM)"}},
          {{"--image-size", "128"}}};  // the only size it makes
}

std::unique_ptr<Step> make_step(const core::Tunables& t) { return std::make_unique<Cluster>(core::tunable(t, "slices")); }

}  // namespace epic

// stepwise_probe: measures the ceilings that the report divides each step's throughput by,
// on the GPU it runs on (report/README.md):
//   sfu_per_s        special-function-unit sin/cos results per second (__sinf, __cosf)
//   fp32_flop_per_s  FP32 FFMA rate, 2 flop per FFMA
//   fp16_flop_per_s  half2 HFMA2 rate, 4 flop per HFMA2 (two halves, a multiply-add each): the
//                    ceiling of the steps that compute in half2 (epic 09, 11 and 12)
//   copy_bytes_per_s device-to-device copy, bytes read + bytes written per second
//   h2d_pinned_bytes_per_s
//                    host-to-device copy from pinned memory (cudaMemcpyAsync of 256 MiB): the
//                    ceiling of a step that streams its input from the host (epic's gulps)
//   tf32_tensor_flop_per_s, bf16_tensor_flop_per_s
//                    the tensor cores through mma.sync (m16n8k8 TF32, m16n8k16 BF16, float
//                    sums), 2 flop per multiply-add: the instruction ae 12-14 and 21-24 use. Hopper's
//                    asynchronous warpgroup mma (wgmma) reaches more; this is the ceiling of
//                    code written with mma.sync.
// Each kernel keeps many independent dependency chains per thread so that latency is
// hidden and the unit itself is the limit; each is timed with CUDA events, best of several.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>

#include "core/cuda_check.cuh"
#include "core/device.hpp"
#include "ceilings.hpp"

namespace {

constexpr int kChains = 8;
constexpr int kThreads = 256;

// 2 MUFU operations (one sin, one cos) per chain per iteration. The FADD keeps the chain
// dependent on both results, so neither call can be dropped.
__global__ void sfu_kernel(float* sink, int iterations) {
  float v[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) v[c] = 1e-3f * (threadIdx.x + c);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) v[c] = __sinf(v[c]) + __cosf(v[c]);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += v[c];
  if (s == 12345.678f) sink[threadIdx.x] = s;  // never true; keeps the work alive
}

constexpr int kFmaChains = 16;
__global__ void fma_kernel(float* sink, int iterations, float a, float b) {
  float v[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) v[c] = threadIdx.x + c;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) v[c] = fmaf(v[c], a, b);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) s += v[c];
  if (s == 12345.678f) sink[threadIdx.x] = s;
}

__global__ void hfma2_kernel(float* sink, int iterations, float a, float b) {
  half2 v[kFmaChains];
  const half2 a2 = __float2half2_rn(a), b2 = __float2half2_rn(b);
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) v[c] = __floats2half2_rn(1e-3f * (threadIdx.x + c), 1e-3f * c);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) v[c] = __hfma2(v[c], a2, b2);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) s += __low2float(v[c]) + __high2float(v[c]);
  if (s == 12345.678f) sink[threadIdx.x] = s;
}

// kMmaChains independent accumulators per warp, each a chain of mma.sync on the same operands
// (their values do not matter to the rate; asm volatile keeps every one).
constexpr int kMmaChains = 8;
template <bool kBf16>
__global__ void mma_kernel(float* sink, int iterations) {
  const uint32_t one = kBf16 ? 0x3f803f80u : 0x3f800000u;  // 1.0 as two bf16, or as one tf32
  const uint32_t a[4] = {one, one, one, one}, b[2] = {one, one};
  float d[kMmaChains][4] = {};
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < kMmaChains; ++c) {
      if (kBf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      else
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < kMmaChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 12345.678f) sink[threadIdx.x] = s;
}

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// Best of `runs` timings of launch(), in milliseconds.
template <class Launch>
double best_ms(int runs, Launch launch) {
  auto timer = core::make_device_timer();
  launch();  // warm-up
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    timer->start();
    launch();
    best = std::min(best, timer->stop_ms());
  }
  return best;
}

}  // namespace

namespace probe {

Measured measure_ceilings(const core::DeviceInfo& device) {
  const int blocks = device.sms * 8;
  const double threads = double(blocks) * kThreads;
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&sink, kThreads * sizeof(float)));

  const int sfu_iters = 4096;
  const double sfu_ms = best_ms(5, [&] {
    sfu_kernel<<<blocks, kThreads>>>(sink, sfu_iters);
    CUDA_CHECK_LAUNCH();
  });
  const double sfu_per_s = threads * sfu_iters * kChains * 2 / (sfu_ms * 1e-3);

  const int fma_iters = 8192;
  const double fma_ms = best_ms(5, [&] {
    fma_kernel<<<blocks, kThreads>>>(sink, fma_iters, 0.999f, 1e-3f);
    CUDA_CHECK_LAUNCH();
  });
  const double flop_per_s = threads * fma_iters * kFmaChains * 2 / (fma_ms * 1e-3);
  const double hfma2_ms = best_ms(5, [&] {
    hfma2_kernel<<<blocks, kThreads>>>(sink, fma_iters, 0.999f, 1e-3f);
    CUDA_CHECK_LAUNCH();
  });
  const double half_flop_per_s = threads * fma_iters * kFmaChains * 4 / (hfma2_ms * 1e-3);

  // A warp's mma: 16 x 8 outputs, k of 8 (TF32) or 16 (BF16) each, 2 flop per multiply-add.
  const int mma_iters = 4096;
  const double warps = threads / 32;
  double mma_ms[2], tensor_flop_per_s[2];
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    mma_ms[bf16] = best_ms(5, [&] {
      if (bf16)
        mma_kernel<true><<<blocks, kThreads>>>(sink, mma_iters);
      else
        mma_kernel<false><<<blocks, kThreads>>>(sink, mma_iters);
      CUDA_CHECK_LAUNCH();
    });
    tensor_flop_per_s[bf16] = warps * mma_iters * kMmaChains * 2.0 * 16 * 8 * (bf16 ? 16 : 8) / (mma_ms[bf16] * 1e-3);
  }

  // 1 GiB each way: far beyond the L2, so the copy measures device memory.
  const size_t bytes = size_t(1) << 30, n = bytes / sizeof(float4);
  float4 *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, bytes));
  CUDA_CHECK(cudaMalloc(&dst, bytes));
  CUDA_CHECK(cudaMemset(src, 0x3f, bytes));
  const double copy_ms = best_ms(5, [&] {
    copy_kernel<<<device.sms * 16, 512>>>(src, dst, n);
    CUDA_CHECK_LAUNCH();
  });
  const double copy_bytes_per_s = 2.0 * bytes / (copy_ms * 1e-3);
  // 256 MiB from pinned host memory into the 1 GiB buffer: the PCIe (or C2C) link, not DRAM.
  const size_t h2d_bytes = size_t(256) << 20;
  void* pinned = nullptr;
  CUDA_CHECK(cudaMallocHost(&pinned, h2d_bytes));
  std::memset(pinned, 0x3f, h2d_bytes);
  const double h2d_ms = best_ms(5, [&] { CUDA_CHECK(cudaMemcpyAsync(src, pinned, h2d_bytes, cudaMemcpyHostToDevice, 0)); });
  const double h2d_pinned_bytes_per_s = double(h2d_bytes) / (h2d_ms * 1e-3);
  CUDA_CHECK(cudaFreeHost(pinned));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  CUDA_CHECK(cudaFree(sink));

  return {{sfu_per_s, flop_per_s, half_flop_per_s, copy_bytes_per_s, h2d_pinned_bytes_per_s, tensor_flop_per_s[0],
           tensor_flop_per_s[1]},
          {sfu_ms, fma_ms, hfma2_ms, copy_ms, h2d_ms, mma_ms[0], mma_ms[1]}};
}

}  // namespace probe

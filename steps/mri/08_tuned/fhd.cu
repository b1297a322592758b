// mri 08_tuned: with sin/cos on the SFUs, the ceiling is the MUFU pipe (two MUFU per pair);
// everything else in the loop only has to stay out of its way. Four changes:
//  - unroll the sample loop (--unroll). The samples are read with uniform constant loads
//    (ULDC); unrolled, a whole batch of them is issued before the first use, so the constant
//    cache's latency is paid once per batch instead of once per sample. 07 ran at the
//    compiler's default unroll of 4.
//  - fewer instructions per pair: 2 pi folded into the voxel coordinates (one multiply less),
//    and each accumulator updated by two fused multiply-adds instead of the lecture's
//    multiply, multiply-add, add (two instructions less).
//  - several voxels per thread (--voxels): each sample loaded from the constant bank serves
//    all of them, so the loads and the loop's own instructions per pair shrink.
//  - threads per block (--threads) and samples per launch (--chunk) as parameters.
// Defaults: the best point of the sweep on `large` (README.md); on `small` the same shape
// leaves most SMs idle.
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

struct KSample {
  float kx, ky, kz;  // the sample's position in k-space
  float rMu, iMu;    // its weight
};
constexpr int kMaxChunk = 65536 / sizeof(KSample);  // 3276 samples fill the 64 KB
__constant__ KSample k_c[kMaxChunk];

__global__ void cmpMu(const float* kx, const float* ky, const float* kz, const float* phiR,
                      const float* phiI, const float* dR, const float* dI, KSample* k, int numK,
                      bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  float rMu, iMu;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
  k[m] = {kx[m], ky[m], kz[m], rMu, iMu};
}

// One thread, kVoxels voxels: every sample read from the constant bank (ULDC) feeds kVoxels
// phases, so the constant loads and the loop's own instructions per pair shrink by kVoxels.
// A block covers kVoxels * blockDim.x consecutive voxels; a thread's voxels are blockDim.x
// apart, so every global load and store of a warp stays one coalesced row.
template <int kUnroll, int kVoxels>
__global__ void cmpFhD(const float* x, const float* y, const float* z, float* rFhD, float* iFhD,
                       int numK, int numX) {
  const int first = blockIdx.x * blockDim.x * kVoxels + threadIdx.x;
  float xn_r[kVoxels], yn_r[kVoxels], zn_r[kVoxels], rFhDn_r[kVoxels], iFhDn_r[kVoxels];
#pragma unroll
  for (int v = 0; v < kVoxels; ++v) {
    const int n = min(first + v * int(blockDim.x), numX - 1);  // past the end: computed, not stored
    xn_r[v] = 2 * core::kPiF * x[n]; yn_r[v] = 2 * core::kPiF * y[n]; zn_r[v] = 2 * core::kPiF * z[n];
    rFhDn_r[v] = rFhD[n]; iFhDn_r[v] = iFhD[n];
  }
#pragma unroll kUnroll
  for (int m = 0; m < numK; ++m) {
#pragma unroll
    for (int v = 0; v < kVoxels; ++v) {
      const float expFhD = k_c[m].kx * xn_r[v] + k_c[m].ky * yn_r[v] + k_c[m].kz * zn_r[v];
      float sArg, cArg;
      __sincosf(expFhD, &sArg, &cArg);
      rFhDn_r[v] += k_c[m].rMu * cArg;
      rFhDn_r[v] -= k_c[m].iMu * sArg;
      iFhDn_r[v] += k_c[m].iMu * cArg;
      iFhDn_r[v] += k_c[m].rMu * sArg;
    }
  }
#pragma unroll
  for (int v = 0; v < kVoxels; ++v) {
    const int n = first + v * blockDim.x;
    if (n < numX) {
      rFhD[n] = rFhDn_r[v];
      iFhD[n] = iFhDn_r[v];
    }
  }
}

// Device-to-device copy of `count` samples into k_c, ordered on the default stream after the
// previous chunk's kernel (which still reads the old contents).
void to_constant(const KSample* from, int count) {
  CUDA_CHECK(cudaMemcpyToSymbolAsync(k_c, from, count * sizeof(KSample), 0, cudaMemcpyDeviceToDevice));
}

using FhDKernel = void (*)(const float*, const float*, const float*, float*, float*, int, int);

template <int kVoxels>
FhDKernel kernel_for(int unroll) {
  switch (unroll) {
    case 1: return cmpFhD<1, kVoxels>;
    case 2: return cmpFhD<2, kVoxels>;
    case 4: return cmpFhD<4, kVoxels>;
    case 8: return cmpFhD<8, kVoxels>;
    case 16: return cmpFhD<16, kVoxels>;
  }
  throw core::UsageError("--unroll " + std::to_string(unroll) + ": must be 1, 2, 4, 8 or 16");
}

FhDKernel kernel_for(int unroll, int voxels) {
  switch (voxels) {
    case 1: return kernel_for<1>(unroll);
    case 2: return kernel_for<2>(unroll);
    case 4: return kernel_for<4>(unroll);
    case 8: return kernel_for<8>(unroll);
  }
  throw core::UsageError("--voxels " + std::to_string(voxels) + ": must be 1, 2, 4 or 8");
}

class FhDStep final : public Step {
 public:
  FhDStep(int threads, int unroll, int chunk, int voxels)
      : threads_(threads), chunk_(chunk), voxels_(voxels), cmpFhD_(kernel_for(unroll, voxels)) {
    // More voxels per thread, more registers: 8 voxels take 80, too many for 1024 threads.
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, cmpFhD_));
    if (threads > attr.maxThreadsPerBlock)
      throw core::UsageError("--threads " + std::to_string(threads) + " with --voxels " +
                             std::to_string(voxels) + ": the kernel uses " +
                             std::to_string(attr.numRegs) + " registers per thread, at most " +
                             std::to_string(attr.maxThreadsPerBlock) + " threads per block");
  }
  void load(const Inputs& in) override {
    dev_.upload(in);
    k_.resize(in.numK);
  }

  void compute() override {
    DeviceProblem& d = dev_;
    CUDA_CHECK(cudaMemsetAsync(d.rFhD.data(), 0, d.numX * sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(d.iFhD.data(), 0, d.numX * sizeof(float)));
    cmpMu<<<blocks_for(d.numK, threads_), threads_>>>(d.kx.data(), d.ky.data(), d.kz.data(),
                                                      d.phiR.data(), d.phiI.data(), d.dR.data(),
                                                      d.dI.data(), k_.data(), d.numK, d.q());
    CUDA_CHECK_LAUNCH();
    for (int first = 0; first < d.numK; first += chunk_) {
      const int count = std::min(chunk_, d.numK - first);
      to_constant(k_.data() + first, count);
      cmpFhD_<<<blocks_for(d.numX, threads_ * voxels_), threads_>>>(
          d.x.data(), d.y.data(), d.z.data(), d.rFhD.data(), d.iFhD.data(), count, d.numX);
      CUDA_CHECK_LAUNCH();
    }
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_, chunk_, voxels_;
  FhDKernel cmpFhD_;
  DeviceProblem dev_;
  DeviceArray<KSample> k_;
};

}  // namespace

StepInfo step_info() {
  return {"08_tuned", "Unrolled, fewer instructions per pair, tuned launch shape", true,
          Accuracy::fast,
          {{"threads", 512, 32, 1024, "Threads per block"},
           {"unroll", 16, 1, 16, "Unroll factor of the sample loop: 1, 2, 4, 8 or 16"},
           {"chunk", 3276, 1, kMaxChunk, "Samples per launch (at most 3276: 64 KB of constant memory)"},
           {"voxels", 4, 1, 8, "Voxels per thread: 1, 2, 4 or 8"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "unroll")),
                                   int(core::tunable(t, "chunk")), int(core::tunable(t, "voxels")));
}

}  // namespace mri

// mri 09_shared_tiles: 08's loop, with the samples staged through shared memory instead of
// __constant__. Each block walks all samples in tiles of blockDim: every thread copies one
// sample from global memory (coalesced), a barrier, then every thread reads the tile with
// broadcast shared loads (LDS), each sample feeding its --voxels voxels as in 08. Shared
// memory has no 64 KB limit, so there are no chunks, no copies into the constant bank and one
// launch for all samples; the price is two barriers per tile.
// Defaults: the best point of the sweep on `large` (README.md), the same 2,048 voxels per
// block as 08's.
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

// 16-byte aligned, 32 bytes: one 128-bit shared load brings kx, ky, kz, rMu.
struct __align__(16) KSample {
  float kx, ky, kz;  // the sample's position in k-space
  float rMu, iMu;    // its weight
  float unused[3];   // the padding, named so that cmpMu writes it (zeros): the tile copy reads it
};

__global__ void cmpMu(const float* kx, const float* ky, const float* kz, const float* phiR,
                      const float* phiI, const float* dR, const float* dI, KSample* k, int numK,
                      bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  float rMu, iMu;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
  k[m] = {kx[m], ky[m], kz[m], rMu, iMu};
}

// One thread, kVoxels voxels: every sample read from the shared tile (LDS) feeds kVoxels
// phases, so the shared loads and the loop's own instructions per pair shrink by kVoxels.
// A block covers kVoxels * blockDim.x consecutive voxels; a thread's voxels are blockDim.x
// apart, so every global load and store of a warp stays one coalesced row.
template <int kUnroll, int kVoxels>
__global__ void cmpFhD(const KSample* k, const float* x, const float* y, const float* z,
                       float* rFhD, float* iFhD, int numK, int numX) {
  extern __shared__ __align__(16) KSample k_s[];  // blockDim.x samples
  const int first = blockIdx.x * blockDim.x * kVoxels + threadIdx.x;
  float xn_r[kVoxels], yn_r[kVoxels], zn_r[kVoxels], rFhDn_r[kVoxels], iFhDn_r[kVoxels];
#pragma unroll
  for (int v = 0; v < kVoxels; ++v) {
    const int n = min(first + v * int(blockDim.x), numX - 1);  // past the end: computed, not stored
    xn_r[v] = 2 * core::kPiF * x[n]; yn_r[v] = 2 * core::kPiF * y[n]; zn_r[v] = 2 * core::kPiF * z[n];
    rFhDn_r[v] = 0; iFhDn_r[v] = 0;
  }
  // Threads past the last voxel still copy their share of every tile: the barriers need them.
  for (int tile = 0; tile < numK; tile += blockDim.x) {
    const int count = min(int(blockDim.x), numK - tile);  // the last tile is partial
    __syncthreads();  // everyone is done with the previous tile
    if (threadIdx.x < count) k_s[threadIdx.x] = k[tile + threadIdx.x];
    __syncthreads();
#pragma unroll kUnroll
    for (int m = 0; m < count; ++m) {
#pragma unroll
      for (int v = 0; v < kVoxels; ++v) {
        const float expFhD = k_s[m].kx * xn_r[v] + k_s[m].ky * yn_r[v] + k_s[m].kz * zn_r[v];
        float sArg, cArg;
        __sincosf(expFhD, &sArg, &cArg);
        rFhDn_r[v] += k_s[m].rMu * cArg;
        rFhDn_r[v] -= k_s[m].iMu * sArg;
        iFhDn_r[v] += k_s[m].iMu * cArg;
        iFhDn_r[v] += k_s[m].rMu * sArg;
      }
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

using FhDKernel = void (*)(const KSample*, const float*, const float*, const float*, float*,
                           float*, int, int);

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
  FhDStep(int threads, int unroll, int voxels)
      : threads_(threads), voxels_(voxels), cmpFhD_(kernel_for(unroll, voxels)) {
    // More voxels per thread, more registers: 8 voxels take 86, at most 640 threads.
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
    cmpMu<<<blocks_for(d.numK, threads_), threads_>>>(d.kx.data(), d.ky.data(), d.kz.data(),
                                                      d.phiR.data(), d.phiI.data(), d.dR.data(),
                                                      d.dI.data(), k_.data(), d.numK, d.q());
    CUDA_CHECK_LAUNCH();
    cmpFhD_<<<blocks_for(d.numX, threads_ * voxels_), threads_, threads_ * sizeof(KSample)>>>(
        k_.data(), d.x.data(), d.y.data(), d.z.data(), d.rFhD.data(), d.iFhD.data(), d.numK,
        d.numX);
    CUDA_CHECK_LAUNCH();
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_, voxels_;
  FhDKernel cmpFhD_;
  DeviceProblem dev_;
  DeviceArray<KSample> k_;
};

}  // namespace

StepInfo step_info() {
  return {"09_shared_tiles", "Samples staged through shared memory in tiles, one launch", true,
          Accuracy::fast,
          {{"threads", 256, 32, 1024, "Threads per block (= samples per tile)"},
           {"unroll", 16, 1, 16, "Unroll factor of the sample loop: 1, 2, 4, 8 or 16"},
           {"voxels", 8, 1, 8, "Voxels per thread: 1, 2, 4 or 8"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "unroll")),
                                   int(core::tunable(t, "voxels")));
}

}  // namespace mri

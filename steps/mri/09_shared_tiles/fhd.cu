// mri 09_shared_tiles: the samples staged through shared memory instead of __constant__.
// Each block copies a tile of blockDim samples from global memory (one sample per thread,
// coalesced), waits at a barrier, and every thread then reads the tile with broadcast shared
// loads. This is how the constant cache's job is done on current GPUs: shared memory has no
// 64 KB limit, so there are no chunks, no copies into the constant bank and one launch for
// all samples; the price is a barrier per tile. The loop is 08's.
#include "device_problem.cuh"
#include "weights.hpp"

namespace mri {
namespace {

constexpr float kPi = 3.1415926535897932384626433832795029f;

// 16-byte aligned (32 bytes with padding): one 128-bit shared load brings kx, ky, kz, rMu.
struct __align__(16) KSample {
  float kx, ky, kz;  // the sample's position in k-space
  float rMu, iMu;    // its weight
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

template <int kUnroll>
__global__ void cmpFhD(const KSample* k, const float* x, const float* y, const float* z,
                       float* rFhD, float* iFhD, int numK, int numX) {
  extern __shared__ __align__(16) KSample k_s[];  // blockDim.x samples
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  // Threads past the last voxel still help load the tiles (the barriers need every thread).
  const int nn = min(n, numX - 1);
  const float xn_r = 2 * kPi * x[nn], yn_r = 2 * kPi * y[nn], zn_r = 2 * kPi * z[nn];
  float rFhDn_r = 0, iFhDn_r = 0;
  for (int first = 0; first < numK; first += blockDim.x) {
    const int count = min(int(blockDim.x), numK - first);  // the last tile is partial
    __syncthreads();  // everyone is done with the previous tile
    if (threadIdx.x < count) k_s[threadIdx.x] = k[first + threadIdx.x];
    __syncthreads();
#pragma unroll kUnroll
    for (int m = 0; m < count; ++m) {
      const float expFhD = k_s[m].kx * xn_r + k_s[m].ky * yn_r + k_s[m].kz * zn_r;
      float sArg, cArg;
      __sincosf(expFhD, &sArg, &cArg);
      rFhDn_r += k_s[m].rMu * cArg;
      rFhDn_r -= k_s[m].iMu * sArg;
      iFhDn_r += k_s[m].iMu * cArg;
      iFhDn_r += k_s[m].rMu * sArg;
    }
  }
  if (n >= numX) return;
  rFhD[n] = rFhDn_r;
  iFhD[n] = iFhDn_r;
}

using FhDKernel = void (*)(const KSample*, const float*, const float*, const float*, float*, float*,
                           int, int);

FhDKernel kernel_for(int unroll) {
  switch (unroll) {
    case 1: return cmpFhD<1>;
    case 2: return cmpFhD<2>;
    case 4: return cmpFhD<4>;
    case 8: return cmpFhD<8>;
    case 16: return cmpFhD<16>;
  }
  throw core::UsageError("--unroll " + std::to_string(unroll) + ": must be 1, 2, 4, 8 or 16");
}

class FhDStep final : public Step {
 public:
  FhDStep(int threads, int unroll) : threads_(threads), cmpFhD_(kernel_for(unroll)) {}
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
    cmpFhD_<<<blocks_for(d.numX, threads_), threads_, threads_ * sizeof(KSample)>>>(
        k_.data(), d.x.data(), d.y.data(), d.z.data(), d.rFhD.data(), d.iFhD.data(), d.numK,
        d.numX);
    CUDA_CHECK_LAUNCH();
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_;
  FhDKernel cmpFhD_;
  DeviceProblem dev_;
  DeviceArray<KSample> k_;
};

}  // namespace

StepInfo step_info() {
  return {"09_shared_tiles", "Samples staged through shared memory in tiles, one launch", true,
          Accuracy::fast,
          {{"threads", 512, 32, 1024, "Threads per block (= samples per tile)"},
           {"unroll", 16, 1, 16, "Unroll factor of the sample loop: 1, 2, 4, 8 or 16"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "unroll")));
}

}  // namespace mri

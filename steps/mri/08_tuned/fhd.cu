// mri 08_tuned: with sin/cos on the SFUs, the ceiling is the MUFU pipe (two MUFU per pair);
// everything else in the loop only has to stay out of its way. Three changes:
//  - unroll the sample loop (--unroll). The samples are read with uniform constant loads
//    (ULDC); unrolled, a whole batch of them is issued before the first use, so the constant
//    cache's latency is paid once per batch instead of once per sample. 07 ran at the
//    compiler's default unroll of 4, which the sweep measures 7.5x slower than the best point.
//  - fewer instructions per pair: 2 pi folded into the voxel coordinates (one multiply less),
//    and each accumulator updated by two fused multiply-adds instead of the lecture's
//    multiply, multiply-add, add (two instructions less).
//  - threads per block (--threads) and samples per launch (--chunk) as parameters.
// Defaults: the best point of the measured sweep (README.md, "Measured").
#include "device_problem.cuh"
#include "weights.hpp"

namespace mri {
namespace {

constexpr float kPi = 3.1415926535897932384626433832795029f;

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

template <int kUnroll>
__global__ void cmpFhD(const float* x, const float* y, const float* z, float* rFhD, float* iFhD,
                       int numK, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  const float xn_r = 2 * kPi * x[n], yn_r = 2 * kPi * y[n], zn_r = 2 * kPi * z[n];
  float rFhDn_r = rFhD[n], iFhDn_r = iFhD[n];
#pragma unroll kUnroll
  for (int m = 0; m < numK; ++m) {
    const float expFhD = k_c[m].kx * xn_r + k_c[m].ky * yn_r + k_c[m].kz * zn_r;
    float sArg, cArg;
    __sincosf(expFhD, &sArg, &cArg);
    rFhDn_r += k_c[m].rMu * cArg;
    rFhDn_r -= k_c[m].iMu * sArg;
    iFhDn_r += k_c[m].iMu * cArg;
    iFhDn_r += k_c[m].rMu * sArg;
  }
  rFhD[n] = rFhDn_r;
  iFhD[n] = iFhDn_r;
}

// Device-to-device copy of `count` samples into k_c, ordered on the default stream after the
// previous chunk's kernel (which still reads the old contents).
void to_constant(const KSample* from, int count) {
  CUDA_CHECK(cudaMemcpyToSymbolAsync(k_c, from, count * sizeof(KSample), 0, cudaMemcpyDeviceToDevice));
}

using FhDKernel = void (*)(const float*, const float*, const float*, float*, float*, int, int);

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
  FhDStep(int threads, int unroll, int chunk)
      : threads_(threads), chunk_(chunk), cmpFhD_(kernel_for(unroll)) {}
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
      cmpFhD_<<<blocks_for(d.numX, threads_), threads_>>>(d.x.data(), d.y.data(), d.z.data(),
                                                          d.rFhD.data(), d.iFhD.data(), count,
                                                          d.numX);
      CUDA_CHECK_LAUNCH();
    }
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_, chunk_;
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
           {"chunk", 2048, 1, kMaxChunk, "Samples per launch (at most 3276: 64 KB of constant memory)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "unroll")),
                                   int(core::tunable(t, "chunk")));
}

}  // namespace mri

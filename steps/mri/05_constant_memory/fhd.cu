// mri 05_constant_memory: every thread of a warp reads the same sample at the same time, and
// nobody writes it: the lecture puts the samples in __constant__ memory, whose cache
// broadcasts one word to all 32 lanes. Constant memory holds 64 KB, so the samples go in
// chunks, one kernel launch per chunk, each launch adding its chunk into rFhD/iFhD. The last
// chunk is usually partial (numK is rarely a multiple of kChunk): it is launched with its
// true length, so no sample is dropped.
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

constexpr int kChunk = 1024;  // samples per launch: 5 arrays x 4 B x 1024 = 20 KB of the 64 KB

__constant__ float kx_c[kChunk], ky_c[kChunk], kz_c[kChunk], rMu_c[kChunk], iMu_c[kChunk];

__global__ void cmpMu(const float* phiR, const float* phiI, const float* dR, const float* dI,
                      float* rMu, float* iMu, int numK, bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu[m], iMu[m]);
}

__global__ void cmpFhD(const float* x, const float* y, const float* z, float* rFhD, float* iFhD,
                       int numK, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  const float xn_r = x[n], yn_r = y[n], zn_r = z[n];
  float rFhDn_r = rFhD[n], iFhDn_r = iFhD[n];
  for (int m = 0; m < numK; ++m) {
    const float expFhD = 2 * core::kPiF * (kx_c[m] * xn_r + ky_c[m] * yn_r + kz_c[m] * zn_r);
    const float cArg = cosf(expFhD);
    const float sArg = sinf(expFhD);
    rFhDn_r += rMu_c[m] * cArg - iMu_c[m] * sArg;
    iFhDn_r += iMu_c[m] * cArg + rMu_c[m] * sArg;
  }
  rFhD[n] = rFhDn_r;
  iFhD[n] = iFhDn_r;
}

// Device-to-device copy of `count` floats into a __constant__ array, ordered on the default
// stream after the previous chunk's kernel (which still reads the old contents).
void to_constant(const float (&symbol)[kChunk], const float* from, int count) {
  CUDA_CHECK(cudaMemcpyToSymbolAsync(symbol, from, count * sizeof(float), 0, cudaMemcpyDeviceToDevice));
}

class FhDStep final : public Step {
 public:
  explicit FhDStep(int threads) : threads_(threads) {}
  void load(const Inputs& in) override {
    dev_.upload(in);
    rMu_.resize(in.numK);
    iMu_.resize(in.numK);
  }

  void compute() override {
    DeviceProblem& d = dev_;
    CUDA_CHECK(cudaMemsetAsync(d.rFhD.data(), 0, d.numX * sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(d.iFhD.data(), 0, d.numX * sizeof(float)));
    cmpMu<<<blocks_for(d.numK, threads_), threads_>>>(d.phiR.data(), d.phiI.data(), d.dR.data(),
                                                      d.dI.data(), rMu_.data(), iMu_.data(),
                                                      d.numK, d.q());
    CUDA_CHECK_LAUNCH();
    for (int first = 0; first < d.numK; first += kChunk) {
      const int count = std::min(kChunk, d.numK - first);
#ifdef STEPWISE_MUTANT_DROP_LAST_CHUNK
      if (count < kChunk) break;  // the bug, in the test suite's build only: validation must catch it
#endif
      to_constant(kx_c, d.kx.data() + first, count);
      to_constant(ky_c, d.ky.data() + first, count);
      to_constant(kz_c, d.kz.data() + first, count);
      to_constant(rMu_c, rMu_.data() + first, count);
      to_constant(iMu_c, iMu_.data() + first, count);
      cmpFhD<<<blocks_for(d.numX, threads_), threads_>>>(d.x.data(), d.y.data(), d.z.data(),
                                                         d.rFhD.data(), d.iFhD.data(), count,
                                                         d.numX);
      CUDA_CHECK_LAUNCH();
    }
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_;
  DeviceProblem dev_;
  DeviceArray<float> rMu_, iMu_;
};

}  // namespace

StepInfo step_info() {
  return {"05_constant_memory", "Samples in __constant__ memory, chunked (structure of arrays)", true,
          Accuracy::exact, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri

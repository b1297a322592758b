// mri 06_constant_aos: the same chunks in __constant__ memory, laid out as an array of
// structs. In 05 one sample's five values sat in five arrays 4 KB apart: five cache lines of
// the small constant cache per sample, shared by every warp on the SM. As a struct they are
// 20 contiguous bytes, one or two lines. cmpMu now writes the struct array directly, and each
// chunk is one copy instead of five.
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

constexpr int kChunk = 1024;  // samples per launch: 20 B x 1024 = 20 KB of the 64 KB

struct KSample {
  float kx, ky, kz;  // the sample's position in k-space
  float rMu, iMu;    // its weight
};
__constant__ KSample k_c[kChunk];

__global__ void cmpMu(const float* kx, const float* ky, const float* kz, const float* phiR,
                      const float* phiI, const float* dR, const float* dI, KSample* k, int numK,
                      bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  float rMu, iMu;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
  k[m] = {kx[m], ky[m], kz[m], rMu, iMu};
}

__global__ void cmpFhD(const float* x, const float* y, const float* z, float* rFhD, float* iFhD,
                       int numK, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  const float xn_r = x[n], yn_r = y[n], zn_r = z[n];
  float rFhDn_r = rFhD[n], iFhDn_r = iFhD[n];
  for (int m = 0; m < numK; ++m) {
    const float expFhD = 2 * core::kPiF * (k_c[m].kx * xn_r + k_c[m].ky * yn_r + k_c[m].kz * zn_r);
    const float cArg = cosf(expFhD);
    const float sArg = sinf(expFhD);
    rFhDn_r += k_c[m].rMu * cArg - k_c[m].iMu * sArg;
    iFhDn_r += k_c[m].iMu * cArg + k_c[m].rMu * sArg;
  }
  rFhD[n] = rFhDn_r;
  iFhD[n] = iFhDn_r;
}

// Device-to-device copy of `count` samples into k_c, ordered on the default stream after the
// previous chunk's kernel (which still reads the old contents).
void to_constant(const KSample* from, int count) {
  CUDA_CHECK(cudaMemcpyToSymbolAsync(k_c, from, count * sizeof(KSample), 0, cudaMemcpyDeviceToDevice));
}

class FhDStep final : public Step {
 public:
  explicit FhDStep(int threads) : threads_(threads) {}
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
    for (int first = 0; first < d.numK; first += kChunk) {
      const int count = std::min(kChunk, d.numK - first);
      to_constant(k_.data() + first, count);
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
  DeviceArray<KSample> k_;
};

}  // namespace

StepInfo step_info() {
  return {"06_constant_aos", "Samples in __constant__ memory as an array of structs", true,
          Accuracy::exact, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri

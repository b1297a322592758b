// mri 04_registers: the voxel's coordinates and its two accumulators live in registers for
// the whole loop. In 03 every iteration re-read x[n], y[n], z[n] and read-modify-wrote
// rFhD[n], iFhD[n] in global memory (the compiler cannot keep them in registers: the output
// pointers might alias the inputs); now the loop's only memory traffic is the sample.
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

__global__ void cmpMu(const float* phiR, const float* phiI, const float* dR, const float* dI,
                      float* rMu, float* iMu, int numK, bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu[m], iMu[m]);
}

__global__ void cmpFhD(const float* kx, const float* ky, const float* kz, const float* rMu,
                       const float* iMu, const float* x, const float* y, const float* z,
                       float* rFhD, float* iFhD, int numK, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  const float xn_r = x[n], yn_r = y[n], zn_r = z[n];
  float rFhDn_r = rFhD[n], iFhDn_r = iFhD[n];
  for (int m = 0; m < numK; ++m) {
    const float expFhD = 2 * core::kPiF * (kx[m] * xn_r + ky[m] * yn_r + kz[m] * zn_r);
    const float cArg = cosf(expFhD);
    const float sArg = sinf(expFhD);
    rFhDn_r += rMu[m] * cArg - iMu[m] * sArg;
    iFhDn_r += iMu[m] * cArg + rMu[m] * sArg;
  }
  rFhD[n] = rFhDn_r;
  iFhD[n] = iFhDn_r;
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
    cmpFhD<<<blocks_for(d.numX, threads_), threads_>>>(
        d.kx.data(), d.ky.data(), d.kz.data(), rMu_.data(), iMu_.data(), d.x.data(), d.y.data(),
        d.z.data(), d.rFhD.data(), d.iFhD.data(), d.numK, d.numX);
    CUDA_CHECK_LAUNCH();
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_;
  DeviceProblem dev_;
  DeviceArray<float> rMu_, iMu_;
};

}  // namespace

StepInfo step_info() {
  return {"04_registers", "Voxel coordinates and accumulators in registers", true,
          Accuracy::exact, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri

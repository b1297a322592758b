// mri 02_scatter_atomic: the CPU loop moved to the GPU as it stands. One thread per k-space
// sample (the outer loop); each thread adds its sample's contribution to every voxel, so all
// threads write the same voxels and every update has to be an atomicAdd.
#include "mri/device_problem.cuh"
#include "core/portable.hpp"
#include "mri/weights.hpp"

namespace mri {
namespace {

__global__ void cmpFhD(const float* kx, const float* ky, const float* kz, const float* phiR,
                       const float* phiI, const float* dR, const float* dI, const float* x,
                       const float* y, const float* z, float* rFhD, float* iFhD, int numK,
                       int numX, bool q) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  float rMu, iMu;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], rMu, iMu);
  for (int n = 0; n < numX; ++n) {
    const float expFhD = 2 * core::kPiF * (kx[m] * x[n] + ky[m] * y[n] + kz[m] * z[n]);
    const float cArg = cosf(expFhD);
    const float sArg = sinf(expFhD);
    // All 32 lanes of a warp hit the same voxel at the same time: the updates serialize.
    atomicAdd(&rFhD[n], rMu * cArg - iMu * sArg);
    atomicAdd(&iFhD[n], iMu * cArg + rMu * sArg);
  }
}

class FhDStep final : public Step {
 public:
  explicit FhDStep(int threads) : threads_(threads) {}
  void load(const Inputs& in) override { dev_.upload(in); }

  void compute() override {
    DeviceProblem& d = dev_;
    CUDA_CHECK(cudaMemsetAsync(d.rFhD.data(), 0, d.numX * sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(d.iFhD.data(), 0, d.numX * sizeof(float)));
    cmpFhD<<<blocks_for(d.numK, threads_), threads_>>>(
        d.kx.data(), d.ky.data(), d.kz.data(), d.phiR.data(), d.phiI.data(), d.dR.data(),
        d.dI.data(), d.x.data(), d.y.data(), d.z.data(), d.rFhD.data(), d.iFhD.data(), d.numK,
        d.numX, d.q());
    CUDA_CHECK_LAUNCH();
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_;
  DeviceProblem dev_;
};

}  // namespace

StepInfo step_info() {
  return {"02_scatter_atomic", "GPU scatter: one thread per sample, atomicAdd into every voxel", true,
          Accuracy::exact, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri

// Lab 01-mri-gather: from scatter to gather. Read the handout, labs/01-mri-gather/README.md, first.
//
// Write the two kernels marked TODO and the two grid sizes in compute(). Everything else (the
// problem, the copies to and from the GPU, timing, validation) comes from the harness: check
// your work with `./stepwise lab 01-mri-gather check`.
//
// As handed out this file compiles and runs, but leaves the output at zero, so the checker
// fails it.
#include "device_problem.cuh"
#include "portable.hpp"
#include "weights.hpp"

namespace mri {
namespace {

// TODO 1 (loop fission): one thread per k-space sample m computes the sample's weight mu_m
// into rMu[m], iMu[m] with sample_weight() from weights.hpp. For Q (q == true) there are no
// data d: dR and dI are null then, so pass 0.f in their place. Mind the threads of the last
// block that have no sample.
__global__ void cmpMu(const float* phiR, const float* phiI, const float* dR, const float* dI,
                      float* rMu, float* iMu, int numK, bool q) {
}

// TODO 2 (gather): one thread per voxel n sums the contributions of all numK samples:
//   phase = 2 pi (kx[m] x[n] + ky[m] y[n] + kz[m] z[n])         (core::kPiF is pi in float)
//   rFhD[n] += rMu[m] cos(phase) - iMu[m] sin(phase)
//   iFhD[n] += iMu[m] cos(phase) + rMu[m] sin(phase)
// Use the accurate sinf/cosf (the lab is graded in the "exact" accuracy class). rFhD and iFhD
// are zero when the kernel starts. Mind the threads of the last block that have no voxel.
__global__ void cmpFhD(const float* kx, const float* ky, const float* kz, const float* rMu,
                       const float* iMu, const float* x, const float* y, const float* z,
                       float* rFhD, float* iFhD, int numK, int numX) {
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
    // TODO 3: enough blocks of threads_ threads to cover every sample (cmpMu) and every voxel
    // (cmpFhD). blocks_for() in device_problem.cuh does the rounding up.
    const int muBlocks = 1;
    const int fhdBlocks = 1;
    cmpMu<<<muBlocks, threads_>>>(d.phiR.data(), d.phiI.data(), d.dR.data(), d.dI.data(),
                                  rMu_.data(), iMu_.data(), d.numK, d.q());
    CUDA_CHECK_LAUNCH();
    cmpFhD<<<fhdBlocks, threads_>>>(d.kx.data(), d.ky.data(), d.kz.data(), rMu_.data(),
                                    iMu_.data(), d.x.data(), d.y.data(), d.z.data(),
                                    d.rFhD.data(), d.iFhD.data(), d.numK, d.numX);
    CUDA_CHECK_LAUNCH();
  }

  void store(float* outR, float* outI) override { dev_.download(outR, outI); }

 private:
  int threads_;
  DeviceProblem dev_;
  DeviceArray<float> rMu_, iMu_;  // the weights, one per sample, written by cmpMu
};

}  // namespace

// The checker passes --threads: keep the tunable's name. Its default is what the timed run uses.
StepInfo step_info() {
  return {"lab_01_mri_gather", "Lab 01: gather, one thread per voxel, weights as their own kernel",
          true, Accuracy::exact, {{"threads", 256, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")));
}

}  // namespace mri

// Lab 03-mri-sfu-tuning, a reference solution (labs/03-mri-sfu-tuning/README.md): 08_tuned's
// kernel with the sample loop unrolled by hand (a full batch of kUnroll samples, then the
// chunk's last numK % kUnroll samples one by one), sin/cos on the SFUs, the fast class, and
// 08's defaults, the best point of the sweep on `large --samples 65536` on the H100 and H200.
#include "device_problem.cuh"
#include "portable.hpp"
#include "weights.hpp"

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

// TODO 1: sine and cosine of the phase on the special function units: one FMUL.RZ by 1/(2 pi)
// and two MUFU instructions.
__device__ __forceinline__ void sin_cos(float phase, float* s, float* c) {
  __sincosf(phase, s, c);
}

// Sample m of the chunk in constant memory, added to the thread's kVoxels voxels (2 pi is
// already in their coordinates).
template <int kVoxels>
__device__ __forceinline__ void add_sample(int m, const float* xn, const float* yn, const float* zn,
                                           float* re, float* im) {
#pragma unroll
  for (int v = 0; v < kVoxels; ++v) {
    const float phase = k_c[m].kx * xn[v] + k_c[m].ky * yn[v] + k_c[m].kz * zn[v];
    float s, c;
    sin_cos(phase, &s, &c);
    re[v] += k_c[m].rMu * c;
    re[v] -= k_c[m].iMu * s;
    im[v] += k_c[m].iMu * c;
    im[v] += k_c[m].rMu * s;
  }
}

// TODO 2: one thread, kVoxels voxels blockDim.x apart (a block covers kVoxels * blockDim.x
// consecutive voxels); the sample loop unrolled kUnroll times.
template <int kUnroll, int kVoxels>
__global__ void cmpFhD(const float* x, const float* y, const float* z, float* rFhD, float* iFhD,
                       int numK, int numX) {
  const int first = blockIdx.x * blockDim.x * kVoxels + threadIdx.x;
  float xn[kVoxels], yn[kVoxels], zn[kVoxels], re[kVoxels], im[kVoxels];
#pragma unroll
  for (int v = 0; v < kVoxels; ++v) {
    const int n = min(first + v * int(blockDim.x), numX - 1);  // past the end: computed, not stored
    xn[v] = 2 * core::kPiF * x[n]; yn[v] = 2 * core::kPiF * y[n]; zn[v] = 2 * core::kPiF * z[n];
    re[v] = rFhD[n]; im[v] = iFhD[n];
  }
  int m = 0;
  for (; m + kUnroll <= numK; m += kUnroll) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) add_sample<kVoxels>(m + u, xn, yn, zn, re, im);
  }
#pragma unroll 1
  for (; m < numK; ++m) add_sample<kVoxels>(m, xn, yn, zn, re, im);  // the chunk's last numK % kUnroll
#pragma unroll
  for (int v = 0; v < kVoxels; ++v) {
    const int n = first + v * blockDim.x;
    if (n < numX) {
      rFhD[n] = re[v];
      iFhD[n] = im[v];
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
    // More voxels per thread, more registers: 8 voxels take about 80, too many for 1024 threads.
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
    // TODO 2: chunk_ samples per launch, voxels_ voxels per thread.
    const int fhdBlocks = blocks_for(d.numX, threads_ * voxels_);
    for (int first = 0; first < d.numK; first += chunk_) {
      const int count = std::min(chunk_, d.numK - first);
      to_constant(k_.data() + first, count);
      cmpFhD_<<<fhdBlocks, threads_>>>(d.x.data(), d.y.data(), d.z.data(), d.rFhD.data(),
                                       d.iFhD.data(), count, d.numX);
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

// TODO 1: the fast class (SFU sin/cos). TODO 3: the defaults, from the sweep on the timed
// problem (`large --samples 65536`): 08's, the best point on the H100 and H200.
StepInfo step_info() {
  return {"lab_03_mri_sfu_tuning", "Lab 03: SFU sin/cos, unrolled, several voxels per thread, a tuned launch shape",
          true, Accuracy::fast,
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

// Lab 03-mri-sfu-tuning: fast math and its cost, then a launch shape chosen from a sweep. Read
// the handout, labs/03-mri-sfu-tuning/README.md, first.
//
// As handed out this is 07_sfu's program without its sine and cosine: sin_cos() below returns
// zeros, so the output is wrong and the checker fails it. The four tuning parameters are
// declared in step_info() (the checker passes them by these names), but the kernel and the
// launches ignore all of them except threads. Everything else (the problem, the copies to and
// from the GPU, timing, validation) comes from the harness: check your work with
// `./stepwise lab 03-mri-sfu-tuning check`.
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

// TODO 1: the sine and cosine of `phase` (radians), into *s and *c.
//   a) First with the accurate sinf() and cosf(), leaving step_info()'s class exact: check,
//      and note the time, rel_l2 and PSNR (README.md, "How to check").
//   b) Then with the special function units: __sincosf(phase, s, c), and the class fast
//      (Accuracy::fast in step_info()). Check again and compare.
// The zeros below only make the file compile; they are wrong on purpose.
__device__ __forceinline__ void sin_cos(float phase, float* s, float* c) {
  (void)phase;
  *s = 0.f;
  *c = 0.f;
}

// TODO 2 (the kernel): honour both template parameters (README.md, task 2).
//   kVoxels: each thread computes kVoxels voxels, blockDim.x apart, so a block covers
//     kVoxels * blockDim.x consecutive voxels and a warp's loads and stores stay coalesced.
//     Every sample read from constant memory then serves kVoxels phases. Keep the voxels'
//     coordinates and sums in arrays of kVoxels floats, indexed in fully unrolled loops (so
//     they stay in registers). A thread may own voxels on both sides of numX: it cannot
//     return early; it computes a clamped voxel, min(n, numX - 1), and stores only n < numX.
//   kUnroll: the sample loop unrolled kUnroll times, with `#pragma unroll kUnroll` or by hand.
//     By hand, the last numK % kUnroll samples of a chunk still have to be added: the checker
//     runs chunks that are not a multiple of the unroll factor.
// As handed out it is 07's loop: one voxel per thread, the compiler's default unrolling.
template <int kUnroll, int kVoxels>
__global__ void cmpFhD(const float* x, const float* y, const float* z, float* rFhD, float* iFhD,
                       int numK, int numX) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= numX) return;
  const float xn = x[n], yn = y[n], zn = z[n];
  float re = rFhD[n], im = iFhD[n];
  for (int m = 0; m < numK; ++m) {
    const float phase = 2 * core::kPiF * (k_c[m].kx * xn + k_c[m].ky * yn + k_c[m].kz * zn);
    float s, c;
    sin_cos(phase, &s, &c);
    re += k_c[m].rMu * c - k_c[m].iMu * s;
    im += k_c[m].iMu * c + k_c[m].rMu * s;
  }
  rFhD[n] = re;
  iFhD[n] = im;
}

// Device-to-device copy of `count` samples into k_c, ordered on the default stream after the
// previous chunk's kernel (which still reads the old contents).
void to_constant(const KSample* from, int count) {
  CUDA_CHECK(cudaMemcpyToSymbolAsync(k_c, from, count * sizeof(KSample), 0, cudaMemcpyDeviceToDevice));
}

using FhDKernel = void (*)(const float*, const float*, const float*, float*, float*, int, int);

// The kernel for --unroll and --voxels: one instantiation per pair of values.
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
    // More voxels per thread, more registers: a kernel may allow fewer than 1024 threads.
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
    // TODO 2 (the launches): chunk_ samples per launch (at most kMaxChunk), and enough blocks
    // for every voxel when each thread has voxels_ of them (blocks_for() rounds up). As handed
    // out: 07's 1,024 samples per launch and one voxel per thread.
    const int chunk = 1024;
    const int fhdBlocks = blocks_for(d.numX, threads_);
    for (int first = 0; first < d.numK; first += chunk) {
      const int count = std::min(chunk, d.numK - first);
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

// The checker passes --threads, --unroll, --chunk and --voxels: keep these four names and
// ranges. The timed run (`--size large --samples 65536`) uses the defaults.
// TODO 1: the accuracy class (exact for sinf/cosf, fast for __sincosf).
// TODO 3: the defaults, chosen from your sweep (README.md, task 3). As handed out: 07's shape.
StepInfo step_info() {
  return {"lab_03_mri_sfu_tuning", "Lab 03: SFU sin/cos, unrolled, several voxels per thread, a tuned launch shape",
          true, Accuracy::exact,
          {{"threads", 256, 32, 1024, "Threads per block"},
           {"unroll", 4, 1, 16, "Unroll factor of the sample loop: 1, 2, 4, 8 or 16"},
           {"chunk", 1024, 1, kMaxChunk, "Samples per launch (at most 3276: 64 KB of constant memory)"},
           {"voxels", 1, 1, 8, "Voxels per thread: 1, 2, 4 or 8"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<FhDStep>(int(core::tunable(t, "threads")), int(core::tunable(t, "unroll")),
                                   int(core::tunable(t, "chunk")), int(core::tunable(t, "voxels")));
}

}  // namespace mri

// mc 04_gpu_rng_direction: 03_gpu_tallies with the randomness made cheap. cuRAND's
// curand_uniform() keeps 64 bytes of state per thread, buffers four outputs behind a branch
// and converts with an integer-to-float instruction that runs at a quarter of the FP32 rate;
// the rejection method for the direction needs ~2.5 uniforms per scattering, and a warp
// loops until its unluckiest lane is accepted. Here:
//  - Philox4x32-10 is called in the kernel (common/mc/philox.hpp): the counter is
//    (draw, photon, tag), the key the seed; no state, no initialisation, no buffering.
//  - One 128-bit draw feeds two interactions: 64 bits each, 23 for the step, 23 for
//    cos(theta), 18 for phi (bits are independent, every bit of Philox is good).
//  - Floats come from the bits by building the mantissa (1.m in [1, 2)), not by conversion.
//    The step uniform is 1.m - 1 + 2^-24, in (0, 1): log never sees 0.
//  - The math around them is cheap too: sqrt as q rsqrt(q), no denormal handling (-ftz=true),
//    a multiply by 1/p instead of a division, the shell index without a float-to-int,
//    positions in shell widths, the direction kept as sines and cosines.
//  - The direction needs no rejection: cos(theta) uniform on (-1, 1), phi uniform, so
//    (sin t cos p, sin t sin p, cos t) is isotropic; sine and cosine from the SFU.
//  - The roulette takes no extra random number: it is decided by the next step's uniform xi
//    (survive if xi <= p), and given survival xi / p is again uniform on (0, 1], so the
//    same number still draws the step. Same distribution as tiny_mc's separate draw.
#include "mc/gpu.cuh"
#include "mc/philox.hpp"
#include "mc/step.hpp"

namespace mc {
namespace {

// Columns -> the block's batch row: shuffles within each warp, then a tree over the warps,
// then one fixed-point atomicAdd per shell. Row `shells` of heat holds the photon counts.
__device__ void store_block_tally(float* heat, int shells, unsigned long long* row) {
  const int threads = blockDim.x, tid = threadIdx.x, lane = tid % 32, warps = threads / 32;
  for (int s = 0; s <= shells; ++s) {  // 1. warp: lane 0's column gets the warp's sum
    float v = heat[s * threads + tid];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) heat[s * threads + tid] = v;
  }
  __syncthreads();
  int stride = 1;  // 2. block: warp w adds warp w + stride, halving until warp 0 has it all
  while (stride < warps) stride *= 2;
  for (stride /= 2; stride > 0; stride /= 2) {
    for (int i = tid; i < (shells + 1) * stride; i += threads) {
      const int s = i / stride, w = i % stride;
      if (w + stride < warps) heat[s * threads + 32 * w] += heat[s * threads + 32 * (w + stride)];
    }
    __syncthreads();
  }
  for (int s = tid; s <= shells; s += threads) atomicAdd(&row[s], to_fixed(heat[s * threads]));  // 3. one update per block
}

extern __shared__ float heat[];  // [shells + 1][blockDim.x]: column threadIdx.x is a thread's tally

// Positions are in shell widths (so the shell is floor(|r|)) and the direction is kept as
// the sines and cosines it is made of.
struct Photon {
  float x, y, z;
  float sin_theta, cos_phi, sin_phi, cos_theta;
  float weight;
};

__device__ Photon launch() { return {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 1.0f}; }

// [1, 2) from the top 23 bits: the float 1.m with m = those bits.
__device__ float one_to_two(uint32_t bits) { return __uint_as_float(0x3f800000u | (bits >> 9)); }

// The step's uniform: 1.m - 1 + 2^-24, in (0, 1) (so the step is never 0 either).
__device__ float step_uniform(uint32_t bits) { return one_to_two(bits) + (-1.0f + 0x1p-24f); }

// The roulette, decided by the step's own uniform xi: survive if xi <= p, and then xi / p is
// again uniform on (0, 1]. Returns false when the photon ends (its weight becomes 0).
__device__ bool roulette(Photon& p, float& xi, const Physics& ph) {
  if (p.weight >= ph.threshold) return true;
  if (xi > ph.survival) {
    p.weight = 0.0f;
    return false;
  }
  xi = fminf(xi * ph.inv_survival, 1.0f);
  p.weight *= ph.inv_survival;
  return true;
}

// Fly log2(xi) * step_scale, deposit into the thread's column (column = threadIdx.x -
// 2^23 threads, see below), scatter with the bits a, b (their low 9 bits each make phi).
// Only SFU math: -ftz=true (compiler_flags) drops the denormal fix-ups around log2 and rsqrt,
// sqrt(q) is q rsqrt(q), and floor(s) for 0 <= s < 2^23 is the mantissa of s + 2^23 added
// rounding toward zero (the float's bits are 0x4b000000 + floor(s)).
__device__ void fly_absorb_scatter(Photon& p, float xi, uint32_t a, uint32_t b, const Physics& ph,
                                   unsigned column, int threads) {
  const float t = __log2f(xi) * ph.step_scale;
  const float t_sin = t * p.sin_theta;
  p.x = fmaf(t_sin, p.cos_phi, p.x);
  p.y = fmaf(t_sin, p.sin_phi, p.y);
  p.z = fmaf(t, p.cos_theta, p.z);

  const float r2 = p.x * p.x + p.y * p.y + p.z * p.z;
  const float r = fminf(r2 * rsqrtf(r2), ph.last_shell);
  const float kept = p.weight * ph.albedo;  // deposit exactly the weight lost
  heat[__float_as_uint(__fadd_rz(r, 8388608.0f)) * threads + column] += p.weight - kept;
  p.weight = kept;

  // cos(theta) = 2 (1.m) - 3 + 2^-23: uniform on [-1 + 2^-23, 1 - 2^-23], never +-1.
  p.cos_theta = fmaf(2.0f, one_to_two(b), -3.0f) + 0x1p-23f;
  const float q = fmaf(-p.cos_theta, p.cos_theta, 1.0f);  // sin^2, >= 2^-23
  p.sin_theta = q * rsqrtf(q);
  const uint32_t phi_bits = ((a & 0x1ffu) << 9) | (b & 0x1ffu);  // 18 bits
  const float phi = fmaf(__uint_as_float(0x3f800000u | (phi_bits << 5)), 2.0f * core::kPiF, -3.0f * core::kPiF);  // [-pi, pi)
  __sincosf(phi, &p.sin_phi, &p.cos_phi);
}

// One interaction from 64 random bits a, b. Returns false when the roulette ends the photon.
__device__ bool interact(Photon& p, uint32_t a, uint32_t b, const Physics& ph, unsigned column, int threads) {
  float xi = step_uniform(a);
  if (!roulette(p, xi, ph)) return false;
  fly_absorb_scatter(p, xi, a, b, ph, column, threads);
  return true;
}

__global__ void transport(Physics ph, unsigned batches, unsigned long long* rows) {
  const int threads = blockDim.x, tid = threadIdx.x;
  for (int s = 0; s <= ph.shells; ++s) heat[s * threads + tid] = 0.0f;
  // heat[shell * threads + tid], with shell's float bits (0x4b000000 + shell) in its place:
  const unsigned column = unsigned(tid) - 0x4b000000u * unsigned(threads);

  const unsigned long long photon = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (photon < ph.photons) {
    const Key key = philox_key(ph.seed);
    Photon p = launch();
    for (uint32_t draw = 0;; ++draw) {
      const Counter r = philox4x32_10({{draw, uint32_t(photon), uint32_t(photon >> 32), kTagGpu}}, key);
      if (!interact(p, r.c[0], r.c[1], ph, column, threads)) break;
      if (!interact(p, r.c[2], r.c[3], ph, column, threads)) break;
    }
    heat[ph.shells * threads + tid] = 1.0f;  // photons simulated
  }
  store_block_tally(heat, ph.shells, rows + size_t(blockIdx.x % batches) * (ph.shells + 1));
}

class GpuRngDirection final : public Step {
 public:
  explicit GpuRngDirection(long threads) : threads_(int(threads)) { check_threads(threads); }

  void load(const Problem& p) override {
    ph_ = physics_of(p);
    blocks_ = (p.photons + threads_ - 1) / threads_;
    batches_ = batches_for(blocks_);
    rows_.resize(batches_ * (p.shells + 1));
    shared_ = size_t(p.shells + 1) * threads_ * sizeof(float);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
  }

  void compute() override {
    CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<blocks_, threads_, shared_>>>(ph_, unsigned(batches_), rows_.data());
    CUDA_CHECK_LAUNCH();
  }

  void store(Tally& tally) override { copy_rows(tally, ph_.shells, batches_, rows_.data()); }

 private:
  int threads_;
  Physics ph_{};
  size_t blocks_ = 0, batches_ = 0, shared_ = 0;
  core::DeviceArray<unsigned long long> rows_;
};

}  // namespace

StepInfo step_info() {
  return {"04_gpu_rng_direction", "GPU, in-kernel Philox, rejection-free direction", true,
          {{"threads", 128, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuRngDirection>(core::tunable(t, "threads"));
}

}  // namespace mc

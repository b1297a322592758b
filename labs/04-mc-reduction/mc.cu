// Lab 04-mc-reduction: per-thread tallies, a warp-shuffle and shared-memory reduction, and a
// random stream per photon. Read the handout, labs/04-mc-reduction/README.md, first.
//
// Write the four functions marked TODO. The physics of a photon (04_gpu_rng_direction's),
// the kernel that runs one photon per thread, the count of photons per block and the host
// side are given. Everything else (flags, the problem, timing, validation against the exact
// transport solution) comes from the harness: check your work with
// `./stepwise lab 04-mc-reduction check`.
//
// As handed out this file compiles and runs, but deposits nothing (and every photon draws the
// same random numbers), so the checker fails it.
#include "gpu.cuh"
#include "philox.hpp"
#include "step.hpp"

namespace mc {
namespace {

extern __shared__ float heat[];  // [shells][blockDim.x]: column threadIdx.x is a thread's tally

// ---- TODO 1: per-thread tallies ------------------------------------------------------------
// 02_gpu_naive deposits with a global atomicAdd into the block's batch row at every
// interaction (~76 per photon). Here each thread owns column threadIdx.x of the shared array
// heat: element heat[s * blockDim.x + threadIdx.x] is its tally of shell s. Nobody else writes
// that column, so no atomics are needed, and a warp's 32 columns are 32 consecutive words (no
// bank conflicts).

// TODO 1a: zero this thread's column, shells 0 .. shells - 1 (shared memory starts with
// whatever the previous block left there).
__device__ void clear_tally(int shells) {
}

// TODO 1b: add weight w to shell `shell` (0 <= shell < shells) of this thread's column.
__device__ void deposit(unsigned shell, float w) {
}

// ---- TODO 2: the block's reduction ---------------------------------------------------------

// TODO 2: add the block's columns into its batch row, one atomicAdd per shell:
//   row[s] += sum over the block's threads of heat[s * blockDim.x + thread],   s < shells,
// added as to_fixed(sum) (gpu.cuh: 64-bit fixed point, so the order of the atomics cannot
// change a bit). Do it in three levels:
//   1. within each warp, with __shfl_down_sync (offsets 16, 8, 4, 2, 1): lane 0 ends with the
//      warp's sum; keep it in shared memory (lane 0's own column will do);
//   2. across the warps, in shared memory, with __syncthreads() before the first round (it
//      reads other warps' sums) and between the rounds (the checker runs racecheck). The
//      checker runs 3 and 5 warps per block: the warp count is not always a power of two;
//   3. one atomicAdd(&row[s], to_fixed(block_sum)) per shell.
// Every thread of the block calls this, those without a photon too (their columns are zero),
// so every lane of every warp is there for the shuffles.
__device__ void store_block_tally(int shells, unsigned long long* row) {
}

// ---- TODO 3: a random stream per photon ----------------------------------------------------
// Philox4x32-10 (philox.hpp) is counter-based: philox4x32_10(counter, key) scrambles a 128-bit
// counter under the key (the seed), so a stream is a range of counters and needs no state.
// Draw `draw` of a photon returns 128 bits, enough for two interactions.

// TODO 3: 128 random bits, draw number `draw` of photon `photon`'s own stream. As handed out
// the counter ignores the photon: every thread draws the same numbers, every photon takes the
// same walk. Put the photon's number (all 64 bits of it) into the counter, next to `draw` and
// the tag kTagGpu, so that photon i draws the same numbers whatever the launch shape.
__device__ Counter random_bits(uint32_t draw, unsigned long long photon, Key key) {
  return philox4x32_10({{draw, 0u, 0u, kTagGpu}}, key);
}

// ---- The physics (given): 04_gpu_rng_direction's photon --------------------------------------

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
// again uniform on (0, 1]. Returns false when the photon ends.
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

// Fly log2(xi) * step_scale shell widths, deposit the weight lost, scatter isotropically with
// the bits a, b. floor(r) for 0 <= r < 2^23 is the mantissa of r + 2^23 added rounding
// toward zero.
__device__ void fly_absorb_scatter(Photon& p, float xi, uint32_t a, uint32_t b, const Physics& ph) {
  const float t = __log2f(xi) * ph.step_scale;
  const float t_sin = t * p.sin_theta;
  p.x = fmaf(t_sin, p.cos_phi, p.x);
  p.y = fmaf(t_sin, p.sin_phi, p.y);
  p.z = fmaf(t, p.cos_theta, p.z);

  const float r2 = p.x * p.x + p.y * p.y + p.z * p.z;
  const float r = fminf(r2 * rsqrtf(r2), ph.last_shell);
  const unsigned shell = __float_as_uint(__fadd_rz(r, 8388608.0f)) - 0x4b000000u;
  const float kept = p.weight * ph.albedo;  // deposit exactly the weight lost
  deposit(shell, p.weight - kept);
  p.weight = kept;

  // cos(theta) uniform on [-1 + 2^-23, 1 - 2^-23], phi uniform on [-pi, pi) from 18 bits.
  p.cos_theta = fmaf(2.0f, one_to_two(b), -3.0f) + 0x1p-23f;
  const float q = fmaf(-p.cos_theta, p.cos_theta, 1.0f);  // sin^2, >= 2^-23
  p.sin_theta = q * rsqrtf(q);
  const uint32_t phi_bits = ((a & 0x1ffu) << 9) | (b & 0x1ffu);
  const float phi = fmaf(__uint_as_float(0x3f800000u | (phi_bits << 5)), 2.0f * core::kPiF, -3.0f * core::kPiF);
  __sincosf(phi, &p.sin_phi, &p.cos_phi);
}

// One interaction from 64 random bits a, b. Returns false when the roulette ends the photon.
__device__ bool interact(Photon& p, uint32_t a, uint32_t b, const Physics& ph) {
  float xi = step_uniform(a);
  if (!roulette(p, xi, ph)) return false;
  fly_absorb_scatter(p, xi, a, b, ph);
  return true;
}

// One photon per thread; block b adds its tally to batch row b % batches.
__global__ void transport(Physics ph, unsigned batches, unsigned long long* rows) {
  clear_tally(ph.shells);
  const unsigned long long first = blockIdx.x * (unsigned long long)blockDim.x;  // the block's first photon
  const unsigned long long photon = first + threadIdx.x;
  if (photon < ph.photons) {
    const Key key = philox_key(ph.seed);
    Photon p = launch();
    for (uint32_t draw = 0;; ++draw) {
      const Counter r = random_bits(draw, photon, key);
      if (!interact(p, r.c[0], r.c[1], ph)) break;
      if (!interact(p, r.c[2], r.c[3], ph)) break;
    }
  }
  unsigned long long* row = rows + size_t(blockIdx.x % batches) * (ph.shells + 1);
  if (threadIdx.x == 0) {  // the last column counts the block's photons (the last block may be partial)
    const unsigned long long left = ph.photons - first;
    atomicAdd(&row[ph.shells], to_fixed(float(left < blockDim.x ? left : blockDim.x)));
  }
  store_block_tally(ph.shells, row);
}

class LabReduction final : public Step {
 public:
  explicit LabReduction(long threads) : threads_(int(threads)) { check_threads(threads); }

  void load(const Problem& p) override {
    ph_ = physics_of(p);
    blocks_ = (p.photons + threads_ - 1) / threads_;
    batches_ = batches_for(blocks_);
    rows_.resize(batches_ * (p.shells + 1));
    shared_ = size_t(p.shells) * threads_ * sizeof(float);
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

// The checker passes --threads: keep the tunable's name. Its default is what the timed run uses.
StepInfo step_info() {
  return {"lab_04_mc_reduction", "Lab 04: per-thread tallies, warp + block reduction, Philox per photon", true,
          {{"threads", 128, 32, 1024, "Threads per block"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<LabReduction>(core::tunable(t, "threads"));
}

}  // namespace mc

// mc 07_gpu_tuned: 06_gpu_lean_interaction with the tallies as rows of 64-bit fixed-point
// counters, one row per kThreadsPerRow threads, and photon weights in 32-bit fixed point,
// because on sm_90 only the 32-bit integer shared atomic is native. A float column per thread
// held the kernel to 16 warps per SM; the rows allow 20, and integer sums are exact, so the
// columns' periodic flush is gone (the README measures what that bought).
#include "mc/gpu.cuh"
#include "mc/philox.hpp"
#include "mc/step.hpp"

namespace mc {
namespace {

// w f rounded to nearest (f in units of 2^-32): the high word of w f + 2^31, written so that it
// is one IMAD.HI (the plain C++ costs three).
__device__ unsigned scaled(unsigned weight, unsigned factor) {
  unsigned product;
  asm("{\n\t.reg .u32 low;\n\t"
      "mad.lo.cc.u32 low, %1, %2, 0x80000000;\n\t"
      "madc.hi.u32 %0, %1, %2, 0;\n\t"
      "}"
      : "=r"(product)
      : "r"(weight), "r"(factor));
  return product;
}

constexpr int kThreadsPerRow = 8;  // threads sharing a row of counters (a warp has four rows)

// A 64-bit counter as two 32-bit words, low then high, updated with the native 32-bit shared
// atomic (a 64-bit or float shared atomicAdd is a compare-and-swap loop on sm_90): the low
// word's atomic returns what it held, and the carry out of that addition (almost always 0)
// goes to the high word. Both unconditionally: a predicated atomic becomes a branch (two more
// issue slots per deposit and a reconvergence barrier; measured 10 % slower than the second
// atomic). Integer addition is associative: any order gives the same bits.
__device__ void add_to_counter(unsigned address, unsigned amount) {
  asm volatile(
      "{\n\t.reg .u32 before, after, carry;\n\t"
      "atom.shared.add.u32 before, [%0], %1;\n\t"
      "add.cc.u32 after, before, %1;\n\t"
      "addc.u32 carry, 0, 0;\n\t"
      "red.shared.add.u32 [%0+4], carry;\n\t"
      "}" ::"r"(address),
      "r"(amount)
      : "memory");
}

// [threads / kThreadsPerRow][2 shells + 1]: a row holds shell s's counter at words 2s, 2s + 1
// (low, high); the odd row length starts the rows of one warp on alternate banks.
extern __shared__ unsigned counters[];

// The rows -> the block's batch row: each shell's counters summed over the rows, converted
// from 2^-bits to the rows' 2^-36, one fixed-point atomicAdd per shell; row `shells` holds
// the block's photon count.
__device__ void store_block_tally(int shells, int bits, unsigned long long block_photons, unsigned long long* row) {
  const int rows = blockDim.x / kThreadsPerRow, stride = 2 * shells + 1;
  for (int s = threadIdx.x; s < shells; s += blockDim.x) {
    unsigned long long sum = 0;
    for (int r = 0; r < rows; ++r)
      sum += counters[r * stride + 2 * s] | (unsigned long long)counters[r * stride + 2 * s + 1] << 32;
    atomicAdd(&row[s], sum << (36 - bits));
  }
  if (threadIdx.x == 0) atomicAdd(&row[shells], block_photons * (unsigned long long)kFixedOne);
}

// Positions are in units of ln 2 / mu_t, so that a step is just log2(xi) (fly_absorb_scatter),
// and the direction is kept as the sines and cosines it is made of.
struct Photon {
  float x, y, z;
  float sin_theta, cos_phi, sin_phi, cos_theta;
  unsigned weight;  // fixed point (Weights)
};

__device__ Photon launch() { return {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 0u}; }

// [1, 2) from the top 23 bits: the float 1.m with m = those bits.
__device__ float one_to_two(uint32_t bits) { return __uint_as_float(0x3f800000u | (bits >> 9)); }

// The step's uniform: 1.m - 1 + 2^-24, in (0, 1) (so the step is never 0 either).
__device__ float step_uniform(uint32_t bits) { return one_to_two(bits) + (-1.0f + 0x1p-24f); }

// sqrt on the SFU in one instruction (MUFU.SQRT); sqrtf is the IEEE sequence.
__device__ float sqrt_approx(float x) {
  float root;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(root) : "f"(x));
  return root;
}

// What the inner loop needs besides Physics, derived once per thread.
struct Derived {
  float shells_per_unit;   // -step_scale: a distance in the units above -> shell widths
  unsigned last_shell;     // float bits of 2^23 + (shells - 1)
  unsigned row_address;    // this thread's row (shared address), less 2^23 shells (see fly_absorb_scatter)
  unsigned one, albedo, threshold;        // Weights
  float survival, inv_survival, inv_end;  // p, 1 / p, 1 / (1 - p) of the roulette
  unsigned count;          // photons of this thread
};

// The roulette, decided by the step's own uniform xi. Survive if xi <= p: weight / p, and
// xi / p is again uniform on (0, 1]. Otherwise the photon ends and the slot launches the
// thread's next photon at once (weight 0 when there is none: the slot retires), flown with
// (xi - p) / (1 - p), again uniform on (0, 1] given xi > p. The new photon keeps the
// direction its predecessor had just drawn: isotropic and independent of everything the new
// photon draws, so the source is still an isotropic point (tiny_mc starts along z; in an
// infinite medium only |r| is tallied, and both give the same distribution of it).
__device__ void roulette(Photon& p, float& xi, int& waiting, const Derived& dv) {
  if (xi <= dv.survival) {
    p.weight = __float2uint_rn(__uint2float_rn(p.weight) * dv.inv_survival);  // w / p, rounded to nearest
    xi = fminf(xi * dv.inv_survival, 1.0f);
  } else {
    p.weight = waiting-- > 0 ? dv.one : 0u;  // the thread's next photon; none when waiting <= 0
    p.x = p.y = p.z = 0.0f;
    xi = fminf((xi - dv.survival) * dv.inv_end, 1.0f);
  }
}

// Fly log2(xi) <= 0 units: backwards along the direction, which is as isotropic as the
// direction itself. Deposit into the thread's row, scatter with the bits a, b.
// Only SFU math: -ftz=true (compiler_flags) drops the denormal fix-ups around log2 and sqrt,
// and floor(r k) for 0 <= r k < 2^23 is the mantissa of r k + 2^23 computed rounding toward
// zero (one FMA; its bits are 0x4b000000 + floor(r k)), so the counter's address is those
// bits times 8 plus row_address, which already subtracts the 0x4b000000 counters (32-bit
// arithmetic wraps).
__device__ void fly_absorb_scatter(Photon& p, float xi, uint32_t a, uint32_t b, const Derived& dv) {
  const float t = __log2f(xi);
  const float t_sin = t * p.sin_theta;
  p.x = fmaf(t_sin, p.cos_phi, p.x);
  p.y = fmaf(t_sin, p.sin_phi, p.y);
  p.z = fmaf(t, p.cos_theta, p.z);

  const float r = sqrt_approx(p.x * p.x + p.y * p.y + p.z * p.z);
  const unsigned shell = min(__float_as_uint(__fmaf_rz(r, dv.shells_per_unit, 8388608.0f)), dv.last_shell);
  const unsigned kept = scaled(p.weight, dv.albedo);  // rounded to nearest: unbiased
  add_to_counter(shell * 8u + dv.row_address, p.weight - kept);  // deposit exactly the weight lost
  p.weight = kept;

  // cos(theta) = 2 (1.m) - 3 with m = bits 1..22 of b and a last 1: (2j + 1) 2^-22 - 1,
  // symmetric and never +-1. phi: bits 23..31 of b and 0..8 of a (one funnel shift puts
  // them side by side), 18 bits; the step took a's top 23.
  p.cos_theta = fmaf(2.0f, __uint_as_float((b & 0x007ffffeu) | 0x3f800001u), -3.0f);
  p.sin_theta = sqrt_approx(fmaf(-p.cos_theta, p.cos_theta, 1.0f));
  const uint32_t phi_bits = __funnelshift_l(b, a, 14) & 0x007fffe0u;
  const float phi = fmaf(__uint_as_float(0x3f800000u | phi_bits), 2.0f * core::kPiF, -3.0f * core::kPiF);  // [-pi, pi)
  __sincosf(phi, &p.sin_phi, &p.cos_phi);
}

constexpr int kInFlight = 8;  // photons per thread at a time

// One round: an interaction of each photon in flight, 64 random bits each (one Philox4x32-7
// draw per two photons; the counter is (draw, thread, tag, thread >> 32): with the constant
// tag in word 2 the first round's second multiply folds away). The roulette is a branch per
// slot: a warp takes it when any of its 32 lanes has that slot below the threshold (1.5 % of
// interactions: 1 - 0.985^32 = 38 % of rounds), so it is kept short.
__device__ void transport_round(Photon (&p)[kInFlight], int& waiting, uint32_t draw, uint32_t thread_lo,
                                uint32_t thread_hi, Key key, const Derived& dv) {
#pragma unroll
  for (int d = 0; d < kInFlight / 2; ++d) {
    const Counter r = philox4x32_7({{draw + d, thread_lo, kTagGpu, thread_hi}}, key);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      Photon& q = p[2 * d + h];
      const uint32_t a = r.c[2 * h], b = r.c[2 * h + 1];
      float xi = step_uniform(a);
      if (q.weight < dv.threshold) roulette(q, xi, waiting, dv);
      fly_absorb_scatter(q, xi, a, b, dv);
    }
  }
}

__global__ void transport(Physics ph, Weights wt, unsigned photons_per_thread, unsigned batches, unsigned long long* rows) {
  const int threads = blockDim.x, tid = threadIdx.x, stride = 2 * ph.shells + 1;
  for (int i = tid; i < threads / kThreadsPerRow * stride; i += threads) counters[i] = 0u;
  __syncthreads();
  unsigned long long* row = rows + size_t(blockIdx.x % batches) * (ph.shells + 1);

  // This thread's photons: [first, first + count) (none for threads past the end).
  const unsigned long long thread = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  const unsigned long long first = thread * photons_per_thread;
  Derived dv;
  dv.count = first < ph.photons ? unsigned(min(ph.photons - first, (unsigned long long)photons_per_thread)) : 0u;
  dv.shells_per_unit = -ph.step_scale;
  dv.last_shell = 0x4b000000u + unsigned(ph.shells - 1);
  dv.row_address = unsigned(__cvta_generic_to_shared(counters + tid / kThreadsPerRow * stride)) - 0x4b000000u * 8u;
  dv.one = wt.one;
  dv.albedo = wt.albedo;
  dv.threshold = wt.threshold;
  dv.survival = ph.survival;
  dv.inv_survival = ph.inv_survival;
  dv.inv_end = 1.0f / (1.0f - ph.survival);
  const Key key = philox_key(ph.seed);

  // Slots beyond count start retired: no weight, never launched again. waiting counts the
  // photons not launched yet (below 0 once none are).
  Photon p[kInFlight];
  int waiting = int(dv.count);
  for (int i = 0; i < kInFlight; ++i) {
    p[i] = launch();
    p[i].weight = waiting-- > 0 ? dv.one : 0u;
  }
  // The whole warp goes round together: first while any lane has photons waiting, then until
  // its last photon ends (a lane that left the first loop alone would run the second apart).
  uint32_t draw = 0;  // one stream per thread, across its photons
  while (__any_sync(0xffffffffu, waiting > 0)) {
    transport_round(p, waiting, draw, uint32_t(thread), uint32_t(thread >> 32), key, dv);
    draw += kInFlight / 2;
  }
  for (;;) {
    bool flying = false;
    for (int i = 0; i < kInFlight; ++i) flying |= p[i].weight > 0u;
    if (!__any_sync(0xffffffffu, flying)) break;
    transport_round(p, waiting, draw, uint32_t(thread), uint32_t(thread >> 32), key, dv);
    draw += kInFlight / 2;
  }
  const unsigned long long block_first = blockIdx.x * (unsigned long long)blockDim.x * photons_per_thread;
  const unsigned long long block_photons = min(ph.photons - block_first, (unsigned long long)blockDim.x * photons_per_thread);
  __syncthreads();
  store_block_tally(ph.shells, wt.bits, block_photons, row);
}

class GpuTuned final : public Step {
 public:
  GpuTuned(long threads, long photons_per_thread) : threads_(int(threads)), asked_(unsigned(photons_per_thread)) {
    check_threads(threads);
  }

  void load(const Problem& p) override {
    ph_ = physics_of(p);
    weights_ = weights_of(p);
    launch_ = plan_flat_launch(p.photons, threads_, asked_);
    rows_.resize(launch_.batches * (p.shells + 1));
    shared_ = size_t(threads_ / kThreadsPerRow) * (2 * p.shells + 1) * sizeof(unsigned);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
  }

  void compute() override {
    CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<launch_.blocks, threads_, shared_>>>(ph_, weights_, launch_.photons_per_thread, unsigned(launch_.batches),
                                                     rows_.data());
    CUDA_CHECK_LAUNCH();
  }

  void store(Tally& tally) override { copy_rows(tally, ph_.shells, launch_.batches, rows_.data()); }

  void describe(core::Fields& params) const override {
    params.set("photons_per_thread_used", launch_.photons_per_thread);
    params.set("photons_in_flight", kInFlight);
    params.set("threads_per_tally_row", kThreadsPerRow);
    params.set("blocks", launch_.blocks);
  }

 private:
  int threads_;
  unsigned asked_;
  Physics ph_{};
  Weights weights_{};
  FlatLaunch launch_;
  size_t shared_ = 0;
  core::DeviceArray<unsigned long long> rows_;
};

}  // namespace

StepInfo step_info() {
  return {"07_gpu_tuned", "GPU, flat loop, lean interaction, fixed-point tally rows", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuTuned>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc

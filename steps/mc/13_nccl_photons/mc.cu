// mc 13_nccl_photons: 11_gpu_circle_table on several GPUs, one process each. 11's launch is
// planned for the whole problem and cut into equal runs of blocks, one run per rank; each GPU
// simulates its run into its own copy of the batch rows, and one ncclAllReduce sums the copies
// (README). A block's photons, random streams and batch row are those it has in 11's launch,
// and the rows are integers, so the sum is 11's tally bit for bit on any number of GPUs.
#include "core/communicator.cuh"
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

// A draw's four words w0..w3 feed three interactions: interaction h takes its step's uniform
// and cos(theta) from w_h, and its phi from w3 (bits 0..9, 11..20, 22..31).

// The step's uniform from bits 11..31 (m): (2m + 1) 2^-22, in (0, 1), never 0 or 1. The float
// 1 + m 2^-23 is one LEA.HI (0x3f800000 + bits >> 11), and 4 (1 + m 2^-23) - 4 + 2^-22 is
// exact in one FFMA.
__device__ float step_uniform(uint32_t bits) {
  return fmaf(__uint_as_float(0x3f800000u + (bits >> 11)), 4.0f, -4.0f + 0x1p-22f);
}

// cos(theta) from bits 0..10 (j): (2j + 1) / 2048 - 1 = j 2^-10 + (2^-11 - 1), symmetric and
// never +-1: a mask, an integer-to-float conversion (I2FP, exact) and one exact FFMA.
__device__ float cos_theta_of(uint32_t bits) { return fmaf(float(bits & 0x7ffu), 0x1p-10f, 0x1p-11f - 1.0f); }

// (cos phi, sin phi) for phi = (2k + 1) pi / 1024 - pi, k = 0 .. 1023: every angle 10 random
// bits name, filled once per block (fill_circle) before the first interaction.
constexpr int kAngles = 1024;
__shared__ float2 circle[kAngles];

__device__ void fill_circle() {
  for (int k = threadIdx.x; k < kAngles; k += blockDim.x) {
    float s, c;
    sincospif((2 * k + 1) / float(kAngles) - 1.0f, &s, &c);  // libm-accurate, once per block
    circle[k] = {c, s};
  }
}

// The table entry named by the 10 bits k of w3 at bit low (fields at 0, 11 and 22; a constant
// once the round is unrolled). The byte offset 8 k is computed from w3 directly (one shift and
// one mask), so that the load is one LDS.64 at the table's constant shared address plus it.
__device__ float2 cos_sin_phi(uint32_t w3, int low) {
  const uint32_t offset = low >= 3 ? (w3 >> (low - 3)) & 0x1ff8u : (w3 << 3) & 0x1ff8u;
  return *reinterpret_cast<const float2*>(reinterpret_cast<const char*>(circle) + offset);
}

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
// direction itself. Deposit into the thread's row, scatter into (cos_theta, phi).
// Only SFU math: -ftz=true (compiler_flags) drops the denormal fix-ups around log2 and sqrt,
// and floor(r k) for 0 <= r k < 2^23 is the mantissa of r k + 2^23 computed rounding toward
// zero (one FMA; its bits are 0x4b000000 + floor(r k)), so the counter's address is those
// bits times 8 plus row_address, which already subtracts the 0x4b000000 counters (32-bit
// arithmetic wraps).
__device__ void fly_absorb_scatter(Photon& p, float xi, float cos_theta, float2 cos_sin_phi, const Derived& dv) {
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

  p.cos_theta = cos_theta;
  p.sin_theta = sqrt_approx(fmaf(-cos_theta, cos_theta, 1.0f));
  p.cos_phi = cos_sin_phi.x;
  p.sin_phi = cos_sin_phi.y;
}

constexpr int kInFlight = 6;  // photons per thread at a time (a multiple of 3)

// One round: an interaction of each photon in flight, 42 random bits each (one Philox4x32-7
// draw per three photons; the counter is (draw, thread, tag, thread >> 32): with the constant
// tag in word 2 the first round's second multiply folds away). The roulette is a branch per
// slot: a warp takes it when any of its 32 lanes has that slot below the threshold (1.5 % of
// interactions: 1 - 0.985^32 = 38 % of rounds), so it is kept short.
__device__ void transport_round(Photon (&p)[kInFlight], int& waiting, uint32_t draw, uint32_t thread_lo,
                                uint32_t thread_hi, Key key, const Derived& dv) {
#pragma unroll
  for (int d = 0; d < kInFlight / 3; ++d) {
    const Counter r = philox4x32_7({{draw + d, thread_lo, kTagGpu, thread_hi}}, key);
#pragma unroll
    for (int h = 0; h < 3; ++h) {
      Photon& q = p[3 * d + h];
      float xi = step_uniform(r.c[h]);
      if (q.weight < dv.threshold) roulette(q, xi, waiting, dv);
      fly_absorb_scatter(q, xi, cos_theta_of(r.c[h]), cos_sin_phi(r.c[3], 11 * h), dv);
    }
  }
}

// first_block: this GPU's first block in the whole launch; block b here is block first_block + b
// there (its photons, its random streams and its batch row).
__global__ void transport(Physics ph, Weights wt, unsigned photons_per_thread, unsigned batches,
                          unsigned long long first_block, unsigned long long* rows) {
  const unsigned long long block = first_block + blockIdx.x;
  const int threads = blockDim.x, tid = threadIdx.x, stride = 2 * ph.shells + 1;
  for (int i = tid; i < threads / kThreadsPerRow * stride; i += threads) counters[i] = 0u;
  fill_circle();
  __syncthreads();
  unsigned long long* row = rows + size_t(block % batches) * (ph.shells + 1);

  // This thread's photons: [first, first + count) (none for threads past the end).
  const unsigned long long thread = block * blockDim.x + threadIdx.x;
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
    draw += kInFlight / 3;
  }
  for (;;) {
    bool flying = false;
    for (int i = 0; i < kInFlight; ++i) flying |= p[i].weight > 0u;
    if (!__any_sync(0xffffffffu, flying)) break;
    transport_round(p, waiting, draw, uint32_t(thread), uint32_t(thread >> 32), key, dv);
    draw += kInFlight / 3;
  }
  const unsigned long long block_first = block * blockDim.x * photons_per_thread;
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
    // Rank r takes blocks [r B / n, (r + 1) B / n): equal runs to a block.
    comm_ = core::world_communicator();
    const core::Ranks& world = core::ranks();
    if (launch_.blocks < size_t(world.size))
      throw core::UsageError(std::to_string(launch_.blocks) + " blocks cannot be shared by " + std::to_string(world.size) +
                             " GPUs: give more --photons or fewer GPUs");
#ifndef STEPWISE_MUTANT_SAME_FIRST_BLOCK
    first_block_ = launch_.blocks * world.rank / world.size;
#else
    first_block_ = 0;  // known wrong: every GPU repeats the first run of blocks
#endif
    my_blocks_ = launch_.blocks * (world.rank + 1) / world.size - first_block_;
    rows_.resize(launch_.batches * (p.shells + 1));
    shared_ = size_t(threads_ / kThreadsPerRow) * (2 * p.shells + 1) * sizeof(unsigned);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
  }

  void compute() override {
    CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<my_blocks_, threads_, shared_>>>(ph_, weights_, launch_.photons_per_thread, unsigned(launch_.batches),
                                                 first_block_, rows_.data());
    CUDA_CHECK_LAUNCH();
    // Every GPU's rows summed into every GPU's: integer sums, so in any order the same bits.
#ifndef STEPWISE_MUTANT_NO_ALLREDUCE
    NCCL_CHECK(ncclAllReduce(rows_.data(), rows_.data(), rows_.size(), ncclUint64, ncclSum, comm_, cudaStreamLegacy));
#endif
  }

  void store(Tally& tally) override { copy_rows(tally, ph_.shells, launch_.batches, rows_.data()); }

  void describe(core::Fields& params) const override {
    params.set("photons_per_thread_used", launch_.photons_per_thread);
    params.set("photons_in_flight", kInFlight);
    params.set("threads_per_tally_row", kThreadsPerRow);
    params.set("blocks", launch_.blocks);
    params.set("blocks_this_gpu", my_blocks_);
  }

 private:
  int threads_;
  unsigned asked_;
  Physics ph_{};
  Weights weights_{};
  FlatLaunch launch_;
  ncclComm_t comm_ = nullptr;
  size_t first_block_ = 0, my_blocks_ = 0;
  size_t shared_ = 0;
  core::DeviceArray<unsigned long long> rows_;
};

}  // namespace

StepInfo step_info() {
  return {"13_nccl_photons", "11 on several GPUs: a run of blocks each, the tallies summed by ncclAllReduce", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}},
          true};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuTuned>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc

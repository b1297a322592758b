// mc 06_gpu_lean_interaction: 05_gpu_flat_loop with the interaction cut down from the SASS
// (the README counts each cut). Once no lane waits for another, a photon costs what the
// schedulers issue for it: Philox4x32-7 instead of -10, one SFU instruction per square root,
// positions in units of ln 2 / mu_t (a step is log2(xi), the shell one FMA), the shell's
// address one IMAD, and two instructions per random float.
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

// Positions are in units of ln 2 / mu_t, so that a step is just log2(xi) (fly_absorb_scatter),
// and the direction is kept as the sines and cosines it is made of.
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
  unsigned row_bytes;      // bytes between two shells of a column: 4 x threads
  unsigned column_bytes;   // this thread's column, less 2^23 rows (see fly_absorb_scatter)
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
__device__ void roulette(Photon& p, float& xi, float& waiting, const Physics& ph, const Derived& dv) {
  if (xi <= dv.survival) {
    p.weight *= dv.inv_survival;
    xi = fminf(xi * dv.inv_survival, 1.0f);
  } else {
    p.weight = fminf(waiting, 1.0f);  // the thread's next photon; 0 when none is waiting
    waiting -= p.weight;
    p.x = p.y = p.z = 0.0f;
    xi = fminf((xi - dv.survival) * dv.inv_end, 1.0f);
  }
}

// Fly log2(xi) <= 0 units: backwards along the direction, which is as isotropic as the
// direction itself. Deposit into the thread's column, scatter with the bits a, b.
// Only SFU math: -ftz=true (compiler_flags) drops the denormal fix-ups around log2 and sqrt,
// and floor(r k) for 0 <= r k < 2^23 is the mantissa of r k + 2^23 computed rounding toward
// zero (one FMA; its bits are 0x4b000000 + floor(r k)), so the shell's byte offset in the
// column is those bits times row_bytes plus column_bytes, which already subtracts the
// 0x4b000000 rows (32-bit arithmetic wraps).
__device__ void fly_absorb_scatter(Photon& p, float xi, uint32_t a, uint32_t b, const Physics& ph, const Derived& dv) {
  const float t = __log2f(xi);
  const float t_sin = t * p.sin_theta;
  p.x = fmaf(t_sin, p.cos_phi, p.x);
  p.y = fmaf(t_sin, p.sin_phi, p.y);
  p.z = fmaf(t, p.cos_theta, p.z);

  const float r = sqrt_approx(p.x * p.x + p.y * p.y + p.z * p.z);
  const unsigned shell = min(__float_as_uint(__fmaf_rz(r, dv.shells_per_unit, 8388608.0f)), dv.last_shell);
  float& cell = *reinterpret_cast<float*>(reinterpret_cast<char*>(heat) + (shell * dv.row_bytes + dv.column_bytes));
  const float kept = p.weight * ph.albedo;  // deposit exactly the weight lost
  cell += p.weight - kept;
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

constexpr int kInFlight = 8;                      // photons per thread at a time
constexpr unsigned kFlushRounds = 2048 / kInFlight;  // ~2,000 interactions per lane between flushes

// A float column that keeps growing rounds every small deposit the same way (the deposits
// are the same few values for every photon), a bias that grows with the column: measured
// energy z = -10 at 1024 photons per thread, 2^30 photons. So every kFlushRounds rounds each
// warp sums its 32 columns by shuffles, adds them to the batch row as fixed point, and
// starts its columns again from 0.
__device__ void flush_warp_tally(unsigned column_tid, int threads, int shells, unsigned long long* row) {
  for (int s = 0; s < shells; ++s) {
    float v = heat[s * threads + column_tid];
    heat[s * threads + column_tid] = 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (column_tid % 32 == 0) atomicAdd(&row[s], to_fixed(v));
  }
}

// One round: an interaction of each photon in flight, 64 random bits each (one Philox4x32-7
// draw per two photons; the counter is (draw, thread, tag, thread >> 32): with the constant
// tag in word 2 the first round's second multiply folds away). The roulette is a branch per
// slot: a warp takes it when any of its 32 lanes has that slot below the threshold (1.5 % of
// interactions: 1 - 0.985^32 = 38 % of rounds), so it is kept short.
__device__ void transport_round(Photon (&p)[kInFlight], float& waiting, uint32_t draw, uint32_t thread_lo,
                                uint32_t thread_hi, Key key, const Physics& ph, const Derived& dv) {
#pragma unroll
  for (int d = 0; d < kInFlight / 2; ++d) {
    const Counter r = philox4x32_7({{draw + d, thread_lo, kTagGpu, thread_hi}}, key);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      Photon& q = p[2 * d + h];
      const uint32_t a = r.c[2 * h], b = r.c[2 * h + 1];
      float xi = step_uniform(a);
      if (q.weight < ph.threshold) roulette(q, xi, waiting, ph, dv);
      fly_absorb_scatter(q, xi, a, b, ph, dv);
    }
  }
}

__global__ void transport(Physics ph, unsigned photons_per_thread, unsigned batches, unsigned long long* rows) {
  const int threads = blockDim.x, tid = threadIdx.x;
  for (int s = 0; s <= ph.shells; ++s) heat[s * threads + tid] = 0.0f;
  unsigned long long* row = rows + size_t(blockIdx.x % batches) * (ph.shells + 1);

  // This thread's photons: [first, first + count) (none for threads past the end).
  const unsigned long long thread = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  const unsigned long long first = thread * photons_per_thread;
  Derived dv;
  dv.count = first < ph.photons ? unsigned(min(ph.photons - first, (unsigned long long)photons_per_thread)) : 0u;
  dv.shells_per_unit = -ph.step_scale;
  dv.last_shell = 0x4b000000u + unsigned(ph.shells - 1);
  dv.row_bytes = 4u * unsigned(threads);
  dv.column_bytes = 4u * unsigned(tid) - 0x4b000000u * dv.row_bytes;
  dv.survival = ph.survival;
  dv.inv_survival = ph.inv_survival;
  dv.inv_end = 1.0f / (1.0f - ph.survival);
  const Key key = philox_key(ph.seed);

  // Slots beyond count start retired: no weight, never launched again. waiting counts the
  // photons not launched yet (a float: exact, and a photon's weight is min(waiting, 1)).
  Photon p[kInFlight];
  float waiting = float(dv.count);
  for (int i = 0; i < kInFlight; ++i) {
    p[i] = launch();
    p[i].weight = fminf(waiting, 1.0f);
    waiting -= p[i].weight;
  }
  // The whole warp goes round together (the flush needs every lane): first while any lane
  // has photons waiting, then until its last photon ends.
  uint32_t draw = 0;  // one stream per thread, across its photons
  unsigned round = 0;
  while (__any_sync(0xffffffffu, waiting > 0.0f)) {
    transport_round(p, waiting, draw, uint32_t(thread), uint32_t(thread >> 32), key, ph, dv);
    draw += kInFlight / 2;
    if (++round % kFlushRounds == 0) flush_warp_tally(tid, threads, ph.shells, row);
  }
  for (;;) {
    bool flying = false;
    for (int i = 0; i < kInFlight; ++i) flying |= p[i].weight > 0.0f;
    if (!__any_sync(0xffffffffu, flying)) break;
    transport_round(p, waiting, draw, uint32_t(thread), uint32_t(thread >> 32), key, ph, dv);
    draw += kInFlight / 2;
    if (++round % kFlushRounds == 0) flush_warp_tally(tid, threads, ph.shells, row);
  }
  heat[ph.shells * threads + tid] = float(dv.count);  // photons simulated
  __syncthreads();
  store_block_tally(heat, ph.shells, row);
}

class GpuLeanInteraction final : public Step {
 public:
  GpuLeanInteraction(long threads, long photons_per_thread) : threads_(int(threads)), asked_(unsigned(photons_per_thread)) {
    check_threads(threads);
  }

  void load(const Problem& p) override {
    ph_ = physics_of(p);
    launch_ = plan_flat_launch(p.photons, threads_, asked_);
    rows_.resize(launch_.batches * (p.shells + 1));
    shared_ = size_t(p.shells + 1) * threads_ * sizeof(float);
    allow_shared(transport, shared_, "--threads " + std::to_string(threads_) + " x --shells " + std::to_string(p.shells));
  }

  void compute() override {
    CUDA_CHECK(cudaMemsetAsync(rows_.data(), 0, rows_.size() * sizeof(rows_.data()[0])));
    transport<<<launch_.blocks, threads_, shared_>>>(ph_, launch_.photons_per_thread, unsigned(launch_.batches), rows_.data());
    CUDA_CHECK_LAUNCH();
  }

  void store(Tally& tally) override { copy_rows(tally, ph_.shells, launch_.batches, rows_.data()); }

  void describe(core::Fields& params) const override {
    params.set("photons_per_thread_used", launch_.photons_per_thread);
    params.set("photons_in_flight", kInFlight);
    params.set("blocks", launch_.blocks);
  }

 private:
  int threads_;
  unsigned asked_;
  Physics ph_{};
  FlatLaunch launch_;
  size_t shared_ = 0;
  core::DeviceArray<unsigned long long> rows_;
};

}  // namespace

StepInfo step_info() {
  return {"06_gpu_lean_interaction", "GPU, flat loop, the interaction cut down from the SASS", true,
          {{"threads", 128, 32, 1024, "Threads per block"},
           {"photons-per-thread", 256, 1, 65536, "Photons per thread (an upper bound: >= 1024 blocks when possible)"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<GpuLeanInteraction>(core::tunable(t, "threads"), core::tunable(t, "photons-per-thread"));
}

}  // namespace mc

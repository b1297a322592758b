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

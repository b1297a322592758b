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

// A photon is its distance from the source and its weight, nothing else. In an infinite,
// homogeneous medium with isotropic scattering the tally sees only |r|, and the radii alone
// are a Markov chain: a new direction is uniform on the sphere whatever came before, so its
// cosine mu with the position vector is uniform on (-1, 1), and after a step s
// |r + s u|^2 = r^2 + 2 s mu r + s^2. Tracking (x, y, z) and a direction would produce the
// same radii, in distribution, at 1.6 times the issue slots (README). Distances are in units of
// ln 2 / mu_t, so that a step is just log2(xi) (see fly_absorb).
struct Photon {
  float r, r2;      // distance from the source, and its square (what the flight updates)
  unsigned weight;  // fixed point (Weights)
};

// The step's uniform from bits 11..31 (m): (2m + 1) 2^-22, in (0, 1), never 0 or 1. The float
// 1 + m 2^-23 is one LEA.HI (0x3f800000 + bits >> 11), and 4 (1 + m 2^-23) - 4 + 2^-22 is
// exact in one FFMA.
__device__ float step_uniform(uint32_t bits) {
  return fmaf(__uint_as_float(0x3f800000u + (bits >> 11)), 4.0f, -4.0f + 0x1p-22f);
}

// 2 mu from bits 0..10 (j): mu = (2j + 1) / 2048 - 1, symmetric and never +-1, made the same
// way: 1 + j 2^-11, then 4 (1 + j 2^-11) - 6 + 2^-10 = 2 mu exactly. 2048 levels:
// E[mu^2] = (1 - 2048^-2) / 3, the continuous value to 2.4e-7, far below what 2^30 photons
// resolve (README).
__device__ float two_mu(uint32_t bits) {
  return fmaf(__uint_as_float(0x3f800000u + ((bits & 0x7ffu) << 12)), 4.0f, -6.0f + 0x1p-10f);
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
  unsigned row_address;    // this thread's row (shared address), less 2^23 shells (see fly_absorb)
  unsigned one, albedo, threshold;        // Weights
  float survival, inv_survival, inv_end;  // p, 1 / p, 1 / (1 - p) of the roulette
  unsigned count;          // photons of this thread
};

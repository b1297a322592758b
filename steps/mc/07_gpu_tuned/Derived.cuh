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

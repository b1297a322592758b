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

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

// The roulette, decided by the step's own uniform xi. Survive if xi <= p: weight / p, and
// xi / p is again uniform on (0, 1]. Otherwise the photon ends and the slot launches the
// thread's next photon at once, at the source (weight 0 when there is none: the slot
// retires), flown with (xi - p) / (1 - p), again uniform on (0, 1] given xi > p.
__device__ void roulette(Photon& p, float& xi, int& waiting, const Derived& dv) {
  if (xi <= dv.survival) {
    p.weight = __float2uint_rn(__uint2float_rn(p.weight) * dv.inv_survival);  // w / p, rounded to nearest
    xi = fminf(xi * dv.inv_survival, 1.0f);
  } else {
    p.weight = waiting-- > 0 ? dv.one : 0u;  // the thread's next photon; none when waiting <= 0
    p.r = p.r2 = 0.0f;
    xi = fminf((xi - dv.survival) * dv.inv_end, 1.0f);
  }
}

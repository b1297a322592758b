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

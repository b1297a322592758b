__global__ void transport(Physics ph, unsigned batches, unsigned long long* rows) {
  extern __shared__ float heat[];  // [shells + 1][blockDim.x]: column threadIdx.x is this thread's
  const int threads = blockDim.x, tid = threadIdx.x;
  for (int s = 0; s <= ph.shells; ++s) heat[s * threads + tid] = 0.0f;
  float* my_heat = heat + tid;  // my_heat[shell * threads]

  const unsigned long long photon = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (photon < ph.photons) {
    curandStatePhilox4_32_10_t rng;
    curand_init(ph.seed, photon, 0, &rng);
    const unsigned last_shell = unsigned(ph.shells - 1);

    float x = 0.0f, y = 0.0f, z = 0.0f;
    float u = 0.0f, v = 0.0f, w = 1.0f;
    float weight = 1.0f;
    for (;;) {
      float t = -logf(curand_uniform(&rng));
      x += t * u;
      y += t * v;
      z += t * w;

      const float r = sqrtf(x * x + y * y + z * z) * ph.shells_per_mfp;
      const unsigned shell = r < float(last_shell) ? unsigned(r) : last_shell;
      const float kept = weight * ph.albedo;  // deposit exactly the weight lost
      my_heat[shell * threads] += weight - kept;
      weight = kept;

      float xi1, xi2;
      do {
        xi1 = 2.0f * curand_uniform(&rng) - 1.0f;
        xi2 = 2.0f * curand_uniform(&rng) - 1.0f;
        t = xi1 * xi1 + xi2 * xi2;
      } while (1.0f < t || t == 0.0f);
      u = 2.0f * t - 1.0f;
      v = xi1 * sqrtf((1.0f - u * u) / t);
      w = xi2 * sqrtf((1.0f - u * u) / t);

      if (weight < ph.threshold) {
        if (curand_uniform(&rng) > ph.survival) break;
        weight /= ph.survival;
      }
    }
    my_heat[ph.shells * threads] = 1.0f;  // photons simulated
  }
  store_block_tally(heat, ph.shells, rows + size_t(blockIdx.x % batches) * (ph.shells + 1));
}

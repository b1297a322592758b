// One interaction from 64 random bits a, b. Returns false when the roulette ends the photon.
__device__ bool interact(Photon& p, uint32_t a, uint32_t b, const Physics& ph, unsigned column, int threads) {
  float xi = step_uniform(a);
  if (!roulette(p, xi, ph)) return false;
  fly_absorb_scatter(p, xi, a, b, ph, column, threads);
  return true;
}

__global__ void transport(Physics ph, unsigned batches, unsigned long long* rows) {
  const int threads = blockDim.x, tid = threadIdx.x;
  for (int s = 0; s <= ph.shells; ++s) heat[s * threads + tid] = 0.0f;
  // heat[shell * threads + tid], with shell's float bits (0x4b000000 + shell) in its place:
  const unsigned column = unsigned(tid) - 0x4b000000u * unsigned(threads);

  const unsigned long long photon = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (photon < ph.photons) {
    const Key key = philox_key(ph.seed);
    Photon p = launch();
    for (uint32_t draw = 0;; ++draw) {
      const Counter r = philox4x32_10({{draw, uint32_t(photon), uint32_t(photon >> 32), kTagGpu}}, key);
      if (!interact(p, r.c[0], r.c[1], ph, column, threads)) break;
      if (!interact(p, r.c[2], r.c[3], ph, column, threads)) break;
    }
    heat[ph.shells * threads + tid] = 1.0f;  // photons simulated
  }
  store_block_tally(heat, ph.shells, rows + size_t(blockIdx.x % batches) * (ph.shells + 1));
}

__global__ void transport(Physics ph, Weights wt, unsigned photons_per_thread, unsigned batches, unsigned long long* rows) {
  const int threads = blockDim.x, tid = threadIdx.x, stride = 2 * ph.shells + 1;
  for (int i = tid; i < threads / kThreadsPerRow * stride; i += threads) counters[i] = 0u;
  __syncthreads();
  unsigned long long* row = rows + size_t(blockIdx.x % batches) * (ph.shells + 1);

  // This thread's photons: [first, first + count) (none for threads past the end).
  const unsigned long long thread = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
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
    draw += kInFlight / 2;
  }
  for (;;) {
    bool flying = false;
    for (int i = 0; i < kInFlight; ++i) flying |= p[i].weight > 0u;
    if (!__any_sync(0xffffffffu, flying)) break;
    transport_round(p, waiting, draw, uint32_t(thread), uint32_t(thread >> 32), key, dv);
    draw += kInFlight / 2;
  }
  const unsigned long long block_first = blockIdx.x * (unsigned long long)blockDim.x * photons_per_thread;
  const unsigned long long block_photons = min(ph.photons - block_first, (unsigned long long)blockDim.x * photons_per_thread);
  __syncthreads();
  store_block_tally(ph.shells, wt.bits, block_photons, row);
}

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

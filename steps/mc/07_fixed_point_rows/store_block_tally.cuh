// w f rounded to nearest (f in units of 2^-32): the high word of w f + 2^31, written so that it
// is one IMAD.HI (the plain C++ costs three).
__device__ unsigned scaled(unsigned weight, unsigned factor) {
  unsigned product;
  asm("{\n\t.reg .u32 low;\n\t"
      "mad.lo.cc.u32 low, %1, %2, 0x80000000;\n\t"
      "madc.hi.u32 %0, %1, %2, 0;\n\t"
      "}"
      : "=r"(product)
      : "r"(weight), "r"(factor));
  return product;
}

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

// Which tiles a product uses (--tiles): 0 by the size of the product, 1 always SmallTile,
// 2 always BigTile (NarrowTile for at most 8 columns in every case).
enum TileChoice { kTilesAuto = 0, kTilesSmall = 1, kTilesBig = 2 };
enum class TileKind { big, small, narrow };
const char* tile_name(TileKind k) { return k == TileKind::big ? "128x128" : k == TileKind::small ? "64x64" : "128x8"; }

// ---- Data parallelism: a copy of the weights on every rank, trained alike ----

// A 64-bit fingerprint of the weights: the sum, modulo 2^64, of a hash of each weight's index
// and bits (SplitMix64's finalizer, a bijection of 64-bit words). A sum of integers does not
// depend on its order, so equal weights give equal fingerprints on every rank; one bit changed
// anywhere changes it (two changes cancel with a chance of 2^-64). *fingerprint is zero before.
__device__ __forceinline__ unsigned long long splitmix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__global__ void fingerprint_weights(size_t n, const float* __restrict__ params, unsigned long long* __restrict__ fingerprint) {
  __shared__ unsigned long long warps[32];
  unsigned long long h = 0;
  for (size_t i = global_index(); i < n; i += size_t(gridDim.x) * blockDim.x)
    h += splitmix64(i << 32 | __float_as_uint(params[i]));  // n < 2^32
  for (int o = 16; o > 0; o /= 2) h += __shfl_down_sync(0xffffffffu, h, o);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = h;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long block = 0;
    for (int w = 0; w < int(blockDim.x / 32); ++w) block += warps[w];
    atomicAdd(fingerprint, block);
  }
}

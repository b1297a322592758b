// 128 x 128: each operand value staged serves 128 products (the most arithmetic per byte of
// shared memory); 8 warps of 64 x 32, 64 sums per thread. For products large enough to fill
// the GPU with such tiles.
using BigTile = Tile<128, 128, 64, 32, 2>;
// 64 x 64, 4 warps of 32 x 32: four times the blocks, for the smaller products (conv3, and
// conv2 / conv4 at small batches).
using SmallTile = Tile<64, 64, 32, 32, 3>;
// 128 x 8, 4 warps of 32 x 8: products with at most 8 columns (conv5's 3 output channels
// padded to 4), where a wider tile would compute mostly zeros.
using NarrowTile = Tile<128, 8, 32, 8, 3>;

constexpr int kK = 32;      // the k extent of a staged tile: 4 mma steps between barriers
// Padding of the staged rows, so that the fragment reads of a warp hit 32 different banks:
// a k-contiguous row of kK + 4 floats puts A[g][t] at bank 4g + t; a row along m or n of
// (length = 8 mod 32) floats puts A[t][g] at bank 8t + g.
constexpr int kPitchK = kK + 4;
constexpr int pitch_mn(int n) { return n + (8 - n % 32 + 32) % 32; }

// ---- One mma step and its fragments ----

// Mma::mma multiplies kStepK values of k, and the other functions read a warp's fragments for
// it from the staged tiles. conv_gemm stages both operands with k contiguous in rows of kPitchK
// floats: lane (g, t) reads row g from k = kk + t of the tile for the step at kk (`at`).
// weight_gemm stages them with k along rows of `pitch` floats: the lane reads column g from k
// row t + kk (`at`).
struct Mma {
  static constexpr int kStepK = 8;
  __device__ static float round(float x) { return __uint_as_float(to_tf32(x)); }
  __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { mma_tf32(d, a, b); }
  // k = kk + t and kk + t + 4 as the layout names them: row g at bank 4g + t (the pitch of
  // 36), 32 different banks.
  __device__ static void rows_a(uint32_t (&a)[4], const float* at) {
    a[0] = to_tf32(at[0]);
    a[1] = to_tf32(at[8 * kPitchK]);
    a[2] = to_tf32(at[4]);
    a[3] = to_tf32(at[8 * kPitchK + 4]);
  }
  __device__ static void rows_b_rounded(uint32_t (&b)[2], const float* at) {
    b[0] = __float_as_uint(at[0]);  // weights are stored rounded
    b[1] = __float_as_uint(at[4]);
  }
  // k rows kk + t and kk + t + 4: column g at bank 8t + g (pitch_mn), 32 different banks.
  __device__ static void columns_a(uint32_t (&a)[4], const float* at, int pitch) {
    a[0] = to_tf32(at[0]);
    a[1] = to_tf32(at[8]);
    a[2] = to_tf32(at[4 * pitch]);
    a[3] = to_tf32(at[4 * pitch + 8]);
  }
  __device__ static void columns_b(uint32_t (&b)[2], const float* at, int pitch) {
    b[0] = to_tf32(at[0]);
    b[1] = to_tf32(at[4 * pitch]);
  }
};

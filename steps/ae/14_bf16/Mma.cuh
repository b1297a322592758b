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

constexpr int kK = 32;      // the k extent of a staged tile: 4 TF32 or 2 BF16 mma steps between barriers
constexpr int kStages = 3;  // tiles in flight: the copy of tile k + 2 overlaps the products of tile k
// Padding of the staged rows, so that the fragment reads of a warp hit 32 different banks:
// a k-contiguous row of kK + 4 floats puts A[g][t] at bank 4g + t; a row along m or n of
// (length = 8 mod 32) floats puts A[t][g] at bank 8t + g.
constexpr int kPitchK = kK + 4;
constexpr int pitch_mn(int n) { return n + (8 - n % 32 + 32) % 32; }

// ---- The operands' precision (--precision): one mma step and its fragments ----

// Mma<O>::mma multiplies kStepK values of k, and the other functions read a warp's fragments
// for it from the staged tiles. conv_gemm stages both operands with k contiguous in rows of
// kPitchK floats: lane (g, t) reads row g from k = row_k(t) + row_step(kk) of the tile for the
// step at kk (`at`). weight_gemm stages them with k along rows of `pitch` floats: the lane
// reads column g from k row t + kk (`at`). The order of k inside a product is free as long as
// A and B agree, and BF16 uses that freedom: its lanes read other k than the fragment layout
// names, the same ones in A and B, so that their shared-memory reads are wide and free of bank
// conflicts.
enum class Operands { tf32, bf16 };
template <Operands O>
struct Mma;

template <>
struct Mma<Operands::tf32> {
  static constexpr int kStepK = 8;
  __device__ static float round(float x) { return __uint_as_float(to_tf32(x)); }
  __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { mma_tf32(d, a, b); }
  // k = kk + t and kk + t + 4 as the layout names them: row g at bank 4g + t (the pitch of
  // 36), 32 different banks.
  __device__ static int row_k(int t) { return t; }
  __device__ static int row_step(int kk) { return kk; }
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

template <>
struct Mma<Operands::bf16> {
  static constexpr int kStepK = 16;
  __device__ static float round(float x) { return round_bf16(x); }
  __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { mma_bf16(d, a, b); }
  // The lane's k pairs (2t, 2t + 1) and (2t + 8, 2t + 9) of step h = kk / 16 are read from
  // k = 8t + 4h + (0, 1) and 8t + 4h + (2, 3): four contiguous floats of a row, one 16-byte
  // load, and over t and h each of the tile's 32 k once. A 16-byte load is served a quarter
  // warp at a time, rows g and g + 1 of t = 0..3: at the pitch of 36 floats row g + 1 starts 4
  // banks after row g, so the two fill each other's gaps (banks 8t + 4h + 0..3 and
  // 8t + 4h + 4..7): 32 different banks. Pairs read where the layout names them (k = 2t,
  // 2t + 1, one 8-byte load) would conflict 2-way at this pitch (rows g and g + 1 share 4
  // banks), and a pitch free of that (40) would not leave room for two 128 x 128 blocks per SM.
  __device__ static int row_k(int t) { return 8 * t; }
  __device__ static int row_step(int kk) { return kk / 4; }
  __device__ static void rows_a(uint32_t (&a)[4], const float* at) {
    const float4 upper = *reinterpret_cast<const float4*>(at);                // row g
    const float4 lower = *reinterpret_cast<const float4*>(at + 8 * kPitchK);  // row g + 8
    a[0] = pack_bf16(upper.x, upper.y);
    a[1] = pack_bf16(lower.x, lower.y);
    a[2] = pack_bf16(upper.z, upper.w);
    a[3] = pack_bf16(lower.z, lower.w);
  }
  __device__ static void rows_b_rounded(uint32_t (&b)[2], const float* at) {
    const float4 v = *reinterpret_cast<const float4*>(at);
    b[0] = pack_rounded(v.x, v.y);  // weights are stored rounded
    b[1] = pack_rounded(v.z, v.w);
  }
  // Here each value is a load of its own (k runs along the rows): the pairs are read from k
  // rows kk + t + (0, 4) and kk + t + (8, 12), so that as for TF32 the lanes t = 0..3 read rows
  // 8 banks apart, 32 different banks (pitch_mn). Rows 2t and 2t + 1, as the layout names them,
  // would put lanes t and t + 2 on the same banks.
  __device__ static void columns_a(uint32_t (&a)[4], const float* at, int pitch) {
    a[0] = pack_bf16(at[0], at[4 * pitch]);
    a[1] = pack_bf16(at[8], at[4 * pitch + 8]);
    a[2] = pack_bf16(at[8 * pitch], at[12 * pitch]);
    a[3] = pack_bf16(at[8 * pitch + 8], at[12 * pitch + 8]);
  }
  __device__ static void columns_b(uint32_t (&b)[2], const float* at, int pitch) {
    b[0] = pack_bf16(at[0], at[4 * pitch]);
    b[1] = pack_bf16(at[8 * pitch], at[12 * pitch]);
  }
};

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Without opting in, a block may have 48 KB of shared memory; every tile below stays under it.
constexpr size_t kSharedLimit = 48 * 1024;

// ---- The tiled 3x3 convolution: the forward pass and the input gradient ----

constexpr int kRowsPerThread = 2;  // output rows per thread: a weight read from shared memory serves both
constexpr int kChannelChunk = 8;   // input channels staged per pass

// Where a block's tile sits and how it is staged. threadIdx.x runs along the image width
// (coalesced loads and stores), threadIdx.y over pairs of rows, threadIdx.z over groups of the
// block's output channels (each thread computes `kOut` of them, see conv_tiled).
struct TileGeometry {
  int tile_w = 0, tile_h = 0;  // output pixels of a block
  int tiles_x = 0, tiles = 0;  // tiles across the width, and per image
  int block_out = 0;           // output channels of a block: blockDim.z x kOut
  int pitch = 0, plane = 0;    // floats per staged row (tile_w + 2 halo, or more) and per staged channel
  size_t shared = 0;           // bytes: the staged input chunk, then its weights
};

TileGeometry tile_geometry(int out_ch, int h, int w, int per_thread) {
  TileGeometry g;
  g.tile_w = std::min(w, 32);
  const int thread_rows = std::max(1, std::min(ceil_div(h, kRowsPerThread), 128 / g.tile_w));
  g.tile_h = thread_rows * kRowsPerThread;
  g.tiles_x = ceil_div(w, g.tile_w);
  g.tiles = g.tiles_x * ceil_div(h, g.tile_h);
  // Up to 256 threads, and at most 4 channel groups: the grid keeps enough blocks for every SM
  // on the 8x8 layers.
  const int groups = std::min({ceil_div(out_ch, per_thread), std::max(1, 256 / (g.tile_w * thread_rows)), 4});
  g.block_out = groups * per_thread;
  // A warp narrower than the tile's 32 banks reads 32 / tile_w staged rows at once, each
  // kRowsPerThread x pitch floats after the last: a pitch that puts them tile_w banks apart
  // makes those reads conflict-free.
  g.pitch = g.tile_w + 2;
  if (g.tile_w < 32)
    for (int p = g.tile_w + 2; p < g.tile_w + 2 + 32; ++p)
      if ((kRowsPerThread * p - g.tile_w) % 32 == 0) {
        g.pitch = p;
        break;
      }
  g.plane = (g.tile_h + 2) * g.pitch;
  g.shared = (size_t(kChannelChunk) * g.plane + size_t(kChannelChunk) * 9 * g.block_out) * sizeof(float);
  if (g.shared > kSharedLimit)
    throw core::RuntimeError("a " + std::to_string(w) + "-pixel-wide tile needs " +
                             std::to_string(g.shared) + " bytes of shared memory, more than 48 KB");
  return g;
}

// Copies `planes` channels of `count` values each from global to shared memory: value q of
// channel c from src[c * src_plane + at(q)] (zero where at(q) is outside, or c >= valid) to
// dst[c * dst_plane + q]. The block's threads are shared out as `pixels` side by side along a
// channel (a warp's loads coalesced) and `channels` such groups on other channels at once.
// Each thread issues its loads kBatch at a time before storing any: the copy waits on memory
// latency, and only loads in flight together overlap it. (A thread per pixel looping over every
// channel left conv1's 32-pixel rows to one warp, one load after another, while three warps
// waited at the barrier.)
struct StagingLanes {
  int pixels, channels, pixel, channel;
  __device__ StagingLanes(int count, int threads) {
    pixels = min(count, threads);
    channels = threads / pixels;
    pixel = int(threadIdx.x) % pixels;
    channel = int(threadIdx.x) / pixels;
    if (channel >= channels) pixel = count;  // no work
  }
};

constexpr int kBatch = 8;  // loads in flight per thread
template <class At>
__device__ __forceinline__ void stage_planes(const StagingLanes& lane, int count, int planes, int valid, const float* src,
                                             size_t src_plane, float* dst, int dst_plane, At at) {
  for (int q = lane.pixel; q < count; q += lane.pixels) {
    const long offset = at(q);  // negative: outside the image
    for (int c0 = lane.channel; c0 < planes; c0 += kBatch * lane.channels) {
      float v[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int c = c0 + u * lane.channels;
        v[u] = offset >= 0 && c < valid ? src[c * src_plane + offset] : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int c = c0 + u * lane.channels;
        if (c < planes) dst[c * dst_plane + q] = v[u];
      }
    }
  }
}

// The gradient through pooling and ReLU from the winners conv_gemm's pooling epilogue kept: a
// window's gradient goes to its winner, none where the winner is 4 (the maximum was 0: the
// ReLU was off). A thread per float4 of the pooled gradient writes all four window positions
// (pool_backward_relu's layout), reading a byte per value instead of the four activations.
__global__ void unpool_winners(size_t quads, int h, int w, int ch, const unsigned char* __restrict__ winners,
                               const float* __restrict__ d_out, float* __restrict__ d_a) {
  const size_t q = global_index();
  if (q >= quads) return;
  const int groups = ch / 4, c = int(q % groups) * 4;
  const size_t pixel = q / groups;
  const int x = int(pixel % (w / 2)), y = int(pixel / (w / 2) % (h / 2));
  const size_t image = pixel / (size_t(w / 2) * (h / 2));
  const size_t at = ((image * h + 2 * y) * w + 2 * x) * ch + c;
  const uchar4 k = reinterpret_cast<const uchar4*>(winners)[q];
  const float4 g = reinterpret_cast<const float4*>(d_out)[q];
#pragma unroll
  for (int d = 0; d < 4; ++d)
    *reinterpret_cast<float4*>(d_a + at + (d / 2 * w + d % 2) * size_t(ch)) =
        make_float4(k.x == d ? g.x : 0.0f, k.y == d ? g.y : 0.0f, k.z == d ? g.z : 0.0f, k.w == d ? g.w : 0.0f);
}

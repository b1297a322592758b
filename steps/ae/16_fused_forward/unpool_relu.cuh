// ---- The backward pass's unpooling ----

// Max pooling's gradient and the ReLU's before it, from what conv1's and conv2's epilogues
// kept: a pooled value's gradient goes to its window's winner if the value (the winner's ReLU
// output) is positive, 0 to the window's other three. One thread per pooled value of
// (planes, ph, pw); d_a is (planes, 2 ph, 2 pw), every element written.
__global__ void unpool_relu(size_t planes, int ph, int pw, const float* __restrict__ d_pooled,
                            const float* __restrict__ pooled, const unsigned char* __restrict__ winner,
                            float* __restrict__ d_a) {
  const size_t idx = global_index();
  if (idx >= planes * ph * pw) return;
  const int x = int(idx % pw), y = int(idx / pw % ph);
  const size_t plane = idx / (size_t(pw) * ph);
  const float d = pooled[idx] > 0 ? d_pooled[idx] : 0.0f;
  const int won = winner[idx];
  float* to = d_a + (plane * 2 * ph + 2 * y) * 2 * pw + 2 * x;
  to[0] = won == 0 ? d : 0.0f;
  to[1] = won == 1 ? d : 0.0f;
  to[2 * pw] = won == 2 ? d : 0.0f;
  to[2 * pw + 1] = won == 3 ? d : 0.0f;
}

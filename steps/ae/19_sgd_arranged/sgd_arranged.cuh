// ---- SGD ----

// SGD with momentum as PyTorch defines it (v = momentum v + g; w -= lr v) for one layer's
// weights and the bias that follows them, and each updated weight written in the two orders
// of the next step's convolutions: 07 read every weight again for that (arrange_weights).
__global__ void sgd_arranged(int in_ch, int out_ch, float lr, float momentum, const float* __restrict__ gradient,
                             float* __restrict__ velocity, float* __restrict__ params, float* __restrict__ forward,
                             float* __restrict__ backward) {
  const size_t idx = global_index(), weights = size_t(out_ch) * in_ch * 9;
  if (idx >= weights + out_ch) return;
  const float v = momentum * velocity[idx] + gradient[idx];
  const float p = params[idx] - lr * v;
  velocity[idx] = v;
  params[idx] = p;
  if (idx >= weights) return;  // a bias
  const int tap = int(idx % 9), i = int(idx / 9 % in_ch), o = int(idx / (9 * size_t(in_ch)));
  forward[(size_t(i) * 9 + tap) * out_ch + o] = p;
  backward[(size_t(o) * 9 + 8 - tap) * in_ch + i] = p;
}

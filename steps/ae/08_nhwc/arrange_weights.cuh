// The weights in the two orders the tiled convolution stages them: forward[i][tap][o], and
// for the input gradient backward[o][8 - tap][i] (the gradient of a 3x3 convolution with
// respect to its input is the convolution of d_out with the mirrored kernel, in and out
// channels swapped). Once per step, before the forward pass: 9 MB of the 1.6 GB a step moves
// at batch 64. in_stored and out_stored are the padded counts; the padding entries are never
// written (zero since allocate_more()).
__global__ void arrange_weights(int in_ch, int out_ch, int in_stored, int out_stored, const float* __restrict__ weight,
                                float* __restrict__ forward, float* __restrict__ backward) {
  const size_t idx = global_index();
  if (idx >= size_t(out_ch) * in_ch * 9) return;
  const int tap = int(idx % 9), i = int(idx / 9 % in_ch), o = int(idx / (9 * size_t(in_ch)));
  forward[(size_t(i) * 9 + tap) * out_stored + o] = weight[idx];
  backward[(size_t(o) * 9 + 8 - tap) * in_stored + i] = weight[idx];
}

// The weights of one layer in the two orders the products read: forward[o][tap][c]
// (k = tap x in_ch + c contiguous per output channel), and for the input gradient backward[c][8 - tap][o] (the gradient of a 3x3
// convolution with respect to its input is the convolution of d_out with the mirrored kernel,
// in and out channels swapped). Padding entries are never written: zero since load().
struct LayerWeights {
  int in = 0, out = 0, in_ch = 0, out_ch = 0;  // real and padded channel counts
  const float* params = nullptr;               // (out, in, 3, 3), the reference layout
  float* forward = nullptr;
  float* backward = nullptr;
};
struct AllWeights {
  LayerWeights layer[kLayers];
};

// One launch for every layer: blockIdx.y is the layer.
__global__ void arrange_weights(AllWeights all) {
  const LayerWeights& l = all.layer[blockIdx.y];
  const size_t idx = global_index();
  if (idx >= size_t(l.out) * l.in * 9) return;
  const int tap = int(idx % 9), c = int(idx / 9 % l.in), o = int(idx / (9 * size_t(l.in)));
  const float v = l.params[idx];
  l.forward[(size_t(o) * 9 + tap) * l.in_ch + c] = v;
  l.backward[(size_t(c) * 9 + 8 - tap) * l.out_ch + o] = v;
}

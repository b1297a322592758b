// ---- What a convolution reads and what it writes: the fusions ----

// Where a convolution's input comes from. conv4 and conv5 convolve the x2 nearest-neighbour
// upsampling of the layer before's activations: instead of writing the upsampled plane (4x the
// bytes) and reading it back, they read each pixel from the half-resolution plane it copies.
enum class Input { plain, upsampled };

template <Input kIn>
__host__ __device__ __forceinline__ size_t input_pixels(int h, int w) {
  return kIn == Input::upsampled ? size_t(h / 2) * (w / 2) : size_t(h) * w;
}
template <Input kIn>
__device__ __forceinline__ size_t input_at(int y, int x, int w) {
  return kIn == Input::upsampled ? size_t(y >> 1) * (w >> 1) + (x >> 1) : size_t(y) * w + x;
}

// What a tiled convolution does with its sums before they leave the SM: the element-wise
// layer that follows it, applied in registers, so that no pass over global memory is left
// for ReLU, pooling, upsampling's adjoint, unpooling or the loss.
enum class Output {
  bias_relu,        // a = max(conv + bias, 0)                                    conv3, conv4
  bias_relu_pool,   // p = 2x2 max of max(conv + bias, 0), and which pixel won    conv1, conv2
  bias,             // y = conv + bias, the reconstruction                        conv5 (reconstruct())
  bias_loss,        // d_y = scale (conv + bias - x), the block's squared error   conv5 (training)
  up_adjoint_relu,  // d_a = 2x2 sum of the input gradient, where a > 0           backward of conv5, conv4
  unpool_relu,      // d_a = the input gradient at the window's winner if p > 0   backward of conv3, conv2
};

struct Epilogue {
  const float* bias = nullptr;      // bias_*
  float* out = nullptr;             // what the mode writes
  unsigned char* winner = nullptr;  // bias_relu_pool writes it, unpool_relu reads it: dy * 2 + dx in the window
  const float* gate = nullptr;      // up_adjoint_relu: a, at half resolution; unpool_relu: p, the pooled output
  const float* target = nullptr;    // bias_loss: the minibatch's images
  float* partial = nullptr;         // bias_loss: mean x the block's sum of squared errors, one per block
  float scale = 0, mean = 0;        // bias_loss
};

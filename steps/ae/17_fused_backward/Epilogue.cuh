struct Epilogue {
  const float* bias = nullptr;      // bias_*
  float* out = nullptr;             // what the mode writes
  unsigned char* winner = nullptr;  // bias_relu_pool writes it, unpool_relu reads it: dy * 2 + dx in the window
  const float* gate = nullptr;      // up_adjoint_relu: a, at half resolution; unpool_relu: p, the pooled output
  const float* target = nullptr;    // bias_loss: the minibatch's images
  float* partial = nullptr;         // bias_loss: mean x the block's sum of squared errors, one per block
  float scale = 0, mean = 0;        // bias_loss
};

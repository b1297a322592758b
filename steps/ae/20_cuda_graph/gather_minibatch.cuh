// ---- The rest of a training step: the minibatch, the loss, SGD ----

// The minibatch of step *step into x: a copy, so that the captured graph reads its images
// from one place whichever step it is (minibatch_start() on the device: 0.8 MB at batch 64).
__global__ void gather_minibatch(const long long* __restrict__ step, int batch, int images, size_t image_size,
                                 const float* __restrict__ data, float* __restrict__ x) {
  const size_t first = size_t(*step % (images / batch)) * size_t(batch) * image_size;
  for (size_t i = global_index(); i < size_t(batch) * image_size; i += size_t(gridDim.x) * blockDim.x)
    x[i] = data[first + i];
}

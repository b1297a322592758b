const char* algorithm_name(cudnnConvolutionBwdDataAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
  }
}
const char* algorithm_name(cudnnConvolutionBwdFilterAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3: return "ALGO_3";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return "FFT_TILING";
    default: return "?";
  }
}

// One algorithm of one convolution pass, as chosen.
template <class Algo>
struct Choice {
  Algo algo{};
  size_t workspace = 0;  // bytes
  float ms = 0;          // its trial time (timed search), or 0 (heuristics)
  cudnnDeterminism_t determinism = CUDNN_NON_DETERMINISTIC;
};

// Winograd and FFT algorithms compute a tile of outputs through a transform of the whole
// tile, so their rounding error scales with the tile's inputs, not with each output's own: an
// output whose inputs are all zero (a black background, as in Fashion-MNIST) comes out as
// +-1e-9 instead of exactly 0, and the ReLU after it switches on or off at random. The
// gradient then differs from every other step's (conv2.bias by 7 % on Fashion-MNIST), which
// keep an exact zero exact. They are left out unless --transforms 1 allows them.
template <class Algo>
bool is_transform(Algo a) {
  const std::string name = algorithm_name(a);
  return name.find("WINOGRAD") != std::string::npos || name.find("FFT") != std::string::npos;
}

// The fastest usable result of a search (cuDNN lists them fastest first): it ran, it fits the
// workspace, it is FMA math, and it is no transform unless those are allowed. cuDNN tries
// only FMA kernels when the descriptor says so; should a result name no math type (default
// math), the descriptor still restricts the kernel that runs, so it is taken only when no
// result says FMA. Tensor-op results are never taken.
template <class Perf, class Algo = decltype(Perf::algo)>
Choice<Algo> pick(const Perf* results, int count, size_t limit, bool transforms, bool timed, const std::string& what) {
  for (cudnnMathType_t want : {CUDNN_FMA_MATH, CUDNN_DEFAULT_MATH})
    for (int i = 0; i < count; ++i) {
      const Perf& r = results[i];
      if (r.status == CUDNN_STATUS_SUCCESS && r.memory <= limit && r.mathType == want &&
          (transforms || !is_transform(r.algo)))
        return {r.algo, r.memory, timed ? r.time : 0.0f, r.determinism};
    }
  throw core::RuntimeError("cuDNN offers no fp32 (FMA) algorithm for " + what + " within a " +
                           std::to_string(limit >> 20) + " MiB workspace (--workspace-mib)" +
                           (transforms ? "" : " without Winograd or FFT (--transforms 1 allows them)"));
}

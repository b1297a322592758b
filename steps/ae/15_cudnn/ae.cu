// ae 15_cudnn: the library reference. The training step of 04 and 07 with every convolution
// done by cuDNN, through its legacy convolution API (cudnn_cnn.h): the forward pass
// (cudnnConvolutionForward, then cudnnAddTensor for the bias), the input gradient
// (cudnnConvolutionBackwardData), the weight gradient (cudnnConvolutionBackwardFilter) and
// the bias gradient (cudnnConvolutionBackwardBias); ReLU forward and backward in place by
// cudnnActivationForward/Backward. Max pooling, upsampling, the loss and SGD are small
// kernels of our own, 04's and 07's (common/ae/elementwise.cuh; pooling by cuDNN is an option,
// --cudnn-pooling: see pool()).
//
// Precision: float data, NCHW, and every convolution restricted to CUDNN_FMA_MATH: true fp32
// products and sums, no TF32 tensor cores (which cuDNN's default math type allows for float
// data on Ampere and later). The algorithms are cuDNN's choice, made once per shape when
// load() first meets it: timed trials of every algorithm (cudnnFind*AlgorithmEx, the legacy
// form of PyTorch's cudnn.benchmark; PyTorch 2 searches through cuDNN's graph API, which may
// try engines no legacy algorithm number names), or cuDNN's heuristics (cudnnGet*_v7) with
// --algo-search 0, within a workspace of at most --workspace-mib, leaving out Winograd and FFT
// (see is_transform; --transforms 1 lets them in). describe() records the choice.
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string>

#include "core/cudnn_check.cuh"
#include "ae/elementwise.cuh"

namespace ae {
namespace {

#include <Descriptor.cuh>
#include <algorithm_name.cuh>
#include <pick.cuh>

#include <sum_losses.cuh>

#include <host.cuh>

}  // namespace

StepInfo step_info() {
  return {"15_cudnn", "GPU: cuDNN convolutions (forward, backward data, backward filter), fp32 FMA math, NCHW", true,
          Accuracy::fp32,
          {{"threads", 256, 32, 1024,
            "Threads per block of our own kernels (a multiple of 32, a power of 2 for the loss reduction)"},
           {"algo-search", 1, 0, 1,
            "1: time every cuDNN algorithm once per shape (cudnnFind*AlgorithmEx); 0: cuDNN's heuristics (cudnnGet*_v7)"},
           {"workspace-mib", 512, 0, 65536, "The most workspace a cuDNN algorithm may use, MiB"},
           {"transforms", 0, 0, 1,
            "1: Winograd and FFT algorithms may be chosen too (their rounding scales with a tile, not an output)"},
           {"cudnn-pooling", 0, 0, 1, "1: max pooling by cuDNN (cudnnPoolingForward/Backward) instead of our kernels"}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& tunables) {
  Options o;
  const long threads = core::tunable(tunables, "threads");
  if (threads % 32 != 0 || (threads & (threads - 1)) != 0)
    throw core::UsageError("--threads " + std::to_string(threads) + ": want a power of 2 from 32 to 1024");
  o.threads = int(threads);
  o.timed_search = core::tunable(tunables, "algo-search") == 1;
  o.workspace_limit = size_t(core::tunable(tunables, "workspace-mib")) << 20;
  o.transforms = core::tunable(tunables, "transforms") == 1;
  o.cudnn_pooling = core::tunable(tunables, "cudnn-pooling") == 1;
  return std::make_unique<Cudnn>(o);
}

}  // namespace ae

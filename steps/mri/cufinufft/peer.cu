// mri cufinufft: the gridding rungs' peer, cuFINUFFT's type-1 3-D transform (finufft, Flatiron
// Institute, Apache-2.0) through its C API on the same problems, under the same harness: the same
// flags and problem files, compute() timed as the rungs' is, the same validation against the
// direct sum in double, the same results record. Not a rung: no parent, no lesson; built where
// cuFINUFFT is installed (the build option cufinufft_dir), else absent with the reason.
//
// The mapping. The project's sum is out(x_i) = sum_m w_m exp(+2 pi i k_m . x_i) over voxels on
// a grid x_i = (ix - n/2)/n (w: conj(phi) d for F^H d, |phi|^2 for Q: mri/weights.hpp). With
// X_m = 2 pi kx_m / nx, the phase of voxel ix is X_m (ix - nx/2): cuFINUFFT's type 1 with
// iflag +1 at mode ix - nx/2, and in its CMCL mode order (modeord 0) that mode's place is ix,
// x fastest, as the voxels are numbered: its output is the voxels' values in their order.
#include <cufinufft.h>

#include <cmath>
#include <string>

#include "core/portable.hpp"
#include "core/timing.hpp"
#include "mri/device_problem.cuh"
#include "mri/weights.hpp"

namespace mri {
namespace {

// The transform's inputs in cuFINUFFT's form: X = 2 pi k / n per axis, c = the sample's weight.
__global__ void to_transform(const float* kx, const float* ky, const float* kz, const float* phiR, const float* phiI,
                             const float* dR, const float* dI, bool q, int numK, float3 scale, float* X, float* Y,
                             float* Z, float2* c) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= numK) return;
  X[m] = kx[m] * scale.x, Y[m] = ky[m] * scale.y, Z[m] = kz[m] * scale.z;
  float re, im;
  sample_weight(q, phiR[m], phiI[m], q ? 0.f : dR[m], q ? 0.f : dI[m], re, im);
  c[m] = make_float2(re, im);
}

__global__ void split(const float2* f, int n, float* outR, float* outI) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) outR[i] = f[i].x, outI[i] = f[i].y;
}

void check(int status, const char* what) {
  if (status == 0) return;
  const std::string why = status == FINUFFT_ERR_EPS_TOO_SMALL        ? "the tolerance is below what float reaches"
                          : status == FINUFFT_ERR_UPSAMPFAC_TOO_SMALL ? "the upsampling factor is too small"
                          : status == FINUFFT_ERR_METHOD_NOTVALID     ? "no such method for a 3-D type 1"
                          : status == FINUFFT_ERR_INSUFFICIENT_SHMEM  ? "the method's subproblem does not fit in shared memory"
                          : status == FINUFFT_ERR_CUDA_FAILURE        ? "a CUDA call failed"
                                                                      : "error " + std::to_string(status) + " (finufft_errors.h)";
  // A choice of flags cuFINUFFT cannot run is bad input (exit 2); anything else a runtime error.
  const bool flags = status == FINUFFT_ERR_EPS_TOO_SMALL || status == FINUFFT_ERR_UPSAMPFAC_TOO_SMALL ||
                     status == FINUFFT_ERR_METHOD_NOTVALID || status == FINUFFT_ERR_INSUFFICIENT_SHMEM;
  if (flags) throw core::UsageError(std::string("cuFINUFFT ") + what + ": " + why + " (--tolerance, --method, --upsampfac)");
  throw core::RuntimeError(std::string("cuFINUFFT ") + what + ": " + why);
}

class Cufinufft final : public Step {
 public:
  Cufinufft(double tolerance, int method, double upsampfac)
      : tolerance_(tolerance), method_(method), upsampfac_(upsampfac) {}
  ~Cufinufft() override {
    if (plan_) cufinufftf_destroy(plan_);
  }

  void load(const Inputs& in) override {
    if (in.nx == 0)
      throw core::UsageError("cuFINUFFT's type 1 needs a Cartesian grid of voxels (x = (ix - nx/2)/nx, as generated "
                             "problems have); these voxels are not one");
    // cuFINUFFT no longer checks that its points lie in [-3 pi, 3 pi) (|k| < 1.5 n here): a
    // sample past that would be folded silently, so it is bad input.
    const int n[3] = {in.nx, in.ny, in.nz};
    const float* k[3] = {in.kx, in.ky, in.kz};
    for (int a = 0; a < 3; ++a)
      for (int m = 0; m < in.numK; ++m)
        if (!(std::fabs(k[a][m]) < 1.5f * n[a]))
          throw core::UsageError("sample " + std::to_string(m) + ": k" + "xyz"[a] + " = " + std::to_string(k[a][m]) +
                                 " lies outside cuFINUFFT's range (|k| < 1.5 n = " + std::to_string(1.5 * n[a]) + ")");
    dev_.upload(in);
    const int numK = in.numK;
    X_.resize(numK), Y_.resize(numK), Z_.resize(numK), c_.resize(numK), f_.resize(in.numX);
    const float3 scale = {float(2 * core::kPi / in.nx), float(2 * core::kPi / in.ny), float(2 * core::kPi / in.nz)};
    to_transform<<<blocks_for(numK, 256), 256>>>(dev_.kx.data(), dev_.ky.data(), dev_.kz.data(), dev_.phiR.data(),
                                                 dev_.phiI.data(), dev_.dR.data(), dev_.dI.data(), dev_.q(), numK,
                                                 scale, X_.data(), Y_.data(), Z_.data(), c_.data());
    CUDA_CHECK_LAUNCH();
    if (plan_) cufinufftf_destroy(plan_), plan_ = nullptr;
    cufinufft_opts opts;
    cufinufft_default_opts(&opts);
    opts.gpu_method = method_;
    opts.upsampfac = upsampfac_;
    opts.modeord = 0;  // CMCL: mode -n/2 first, the voxels' order
    const int64_t modes[3] = {in.nx, in.ny, in.nz};
    CUDA_CHECK(cudaDeviceSynchronize());
    const core::HostClock plan_clock;
    check(cufinufftf_makeplan(1, 3, modes, +1, 1, float(tolerance_), &plan_, &opts), "makeplan");
    CUDA_CHECK(cudaDeviceSynchronize());
    makeplan_ms_ = plan_clock.elapsed_ms();
    const core::HostClock setpts_clock;  // the point sort: what the rungs' plan does
    check(cufinufftf_setpts(plan_, numK, X_.data(), Y_.data(), Z_.data(), 0, nullptr, nullptr, nullptr), "setpts");
    CUDA_CHECK(cudaDeviceSynchronize());
    setpts_ms_ = setpts_clock.elapsed_ms();
  }

  void compute() override {
    check(cufinufftf_execute(plan_, reinterpret_cast<cuFloatComplex*>(c_.data()),
                             reinterpret_cast<cuFloatComplex*>(f_.data())),
          "execute");
  }

  void store(float* outR, float* outI) override {
    split<<<blocks_for(dev_.numX, 256), 256>>>(f_.data(), dev_.numX, dev_.rFhD.data(), dev_.iFhD.data());
    CUDA_CHECK_LAUNCH();
    dev_.download(outR, outI);
  }

  void describe(core::Fields& params) const override {
    params.set("mode", "method" + std::to_string(method_));  // each method a row of its own (as a peer's modes)
    params.set("makeplan_ms", makeplan_ms_).set("setpts_ms", setpts_ms_).set("plan_ms", makeplan_ms_ + setpts_ms_);
    params.set("upload_ms", dev_.upload_ms);
  }

 private:
  double tolerance_;
  int method_;
  double upsampfac_;
  cufinufftf_plan plan_ = nullptr;
  DeviceProblem dev_;
  DeviceArray<float> X_, Y_, Z_;
  DeviceArray<float2> c_, f_;
  double makeplan_ms_ = 0, setpts_ms_ = 0;
};

}  // namespace

StepInfo step_info() {
  return {"cufinufft", "cuFINUFFT type 1 (finufft 9810998), fp32", true, Accuracy::tolerance,
          {{"tolerance", 1e-4, 1e-6, 1e-2, "cuFINUFFT's eps: the relative error it aims for", false},
           {"method", 2, 1, 4, "gpu_method: 1 nonuniform points, 2 subproblems (its default), 3 output driven, "
                               "4 block gather"},
           {"upsampfac", 2, 1.25, 2, "sigma, the grid's oversampling (2 or 1.25 have its tuned kernel widths)", false}}};
}

std::unique_ptr<Step> make_step(const core::Tunables& t) {
  return std::make_unique<Cufinufft>(core::real_tunable(t, "tolerance"), int(core::tunable(t, "method")),
                                     core::real_tunable(t, "upsampfac"));
}

}  // namespace mri

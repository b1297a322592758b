// The GPU solver in a build without CUDA or cuFFT: it is not there, which is exit 77 (no
// usable GPU) for --solver gpu, as for the GPU steps.
#include "core/error.hpp"
#include "recon_gpu.hpp"

namespace mri {

namespace {
[[noreturn]] void not_built() { throw core::NoGpuError("this program was built without CUDA and cuFFT (the GPU solver)"); }
}  // namespace

struct GpuNormalOperator::Device {};

bool gpu_solver_built() { return false; }

GpuNormalOperator::GpuNormalOperator(std::array<int, 3> n, double lambda) : n_(n), lambda_(lambda) { not_built(); }
GpuNormalOperator::GpuNormalOperator(std::array<int, 3> n, const cvec&, double lambda) : n_(n), lambda_(lambda) { not_built(); }
void GpuNormalOperator::set_kernel(const cvec&) { not_built(); }
GpuNormalOperator::~GpuNormalOperator() = default;
void GpuNormalOperator::apply(const cvec&, cvec&) const { not_built(); }

CgResult conjugate_gradient_gpu(const GpuNormalOperator&, const cvec&, int, const std::function<void(int, double)>&) { not_built(); }

}  // namespace mri

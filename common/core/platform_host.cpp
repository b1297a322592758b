// The platform for CPU-only programs: they never ask for a GPU. Linked instead of
// platform_cuda.cu, so a CPU step carries no CUDA dependency.
#include "core/device.hpp"
#include "core/error.hpp"

namespace core {

DeviceInfo require_gpu(int) { throw NoGpuError("this program was built without CUDA"); }
std::unique_ptr<KernelTimer> make_device_timer() { return make_host_timer(); }

}  // namespace core

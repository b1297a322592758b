// lab_gpu_usable: whether this machine has a GPU the lab programs can use, asked the way every
// GPU step asks first (core::require_gpu: cudaGetDeviceCount, then the device itself). The lab
// checker (labs/lab.py) runs it before it compiles anything, so that the tests skip at once
// where there is no GPU. Exit 0 and the device's name on stdout, or 77 and the reason.
#include <cstdio>

#include "core/device.hpp"
#include "core/error.hpp"

int main(int, char** argv) {
  return core::exit_code_of(argv[0], [] {
    const core::DeviceInfo d = core::require_gpu(0);
    std::printf("%s (sm %s, %d SMs)\n", d.name.c_str(), d.sm.c_str(), d.sms);
    return int(core::kOk);
  });
}

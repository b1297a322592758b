// Lab 00's harness: the work to be timed, the student's measure() on it, the project's own
// timer on the same work, and the comparison. Exit 0 when the student's figures agree with the
// project's timer, 1 when they do not (the message says which rule failed), 2 on bad flags,
// 77 without a GPU.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/device.hpp"
#include "core/device_array.cuh"
#include "core/error.hpp"
#include "core/timing.hpp"
#include "timing_lab.hpp"

namespace timing_lab {
namespace {

long long g_launches = 0;  // every launch of the lab's kernel, the student's and the harness's

// A chain of multiply-adds per element: compute-bound and long enough (about a millisecond at
// the default size on a current GPU) that launch overhead and clock granularity do not matter.
__global__ void work_kernel(const float* __restrict__ in, float* __restrict__ out, size_t n, int fmas) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  for (int k = 0; k < fmas; ++k) x = fmaf(x, 0.999f, 0.001f);
  out[i] = x;
}

// What the kernel computes, on the host: the check that measure() copied the result back.
float expected(float x, int fmas) {
  for (int k = 0; k < fmas; ++k) x = std::fmaf(x, 0.999f, 0.001f);
  return x;
}

double median_of(std::vector<double> v) { return core::summarize(std::move(v)).median; }

}  // namespace

void Workload::launch(const float* device_in, float* device_out) const {
  ++g_launches;
  const int threads = 256;
  work_kernel<<<unsigned((n + threads - 1) / threads), threads>>>(device_in, device_out, n, fmas);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace timing_lab

int main(int argc, char** argv) {
  return core::exit_code_of(argv[0], [&]() -> int {
    using namespace timing_lab;
    long long elements = 1LL << 24;
    int fmas = 2048, repeat = 10, device = 0;
    bool check = false, quiet = false;
    CLI::App app{"Lab 00: your timer against the project's, on the same kernel"};
    app.add_option("--elements", elements, "Floats in the input (and output)")->check(CLI::Range(1LL, 1LL << 28));
    app.add_option("--fmas", fmas, "Multiply-adds per element")->check(CLI::Range(1, 1 << 16));
    app.add_option("--repeat", repeat, "Timed runs")->check(CLI::Range(3, 1000));
    app.add_option("--device", device, "CUDA device");
    app.add_flag("--check", check, "Accepted for the lab checker; the comparison always runs");
    app.add_flag("--quiet", quiet, "Only the verdict");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) { app.exit(e); return 0; }
      throw core::UsageError(e.what());
    }
    core::require_gpu(device);

    std::vector<float> in(static_cast<size_t>(elements)), out(static_cast<size_t>(elements), 0.0f);
    for (size_t i = 0; i < in.size(); ++i) in[i] = float(i % 1000) / 1000.0f;
    const Workload work{in.data(), out.data(), size_t(elements), fmas};

    // The student's measurement first.
    const long long before = g_launches;
    const Measurement m = measure(work, repeat);
    const long long student_launches = g_launches - before;

    // The student's copy-out: a sample of elements must hold the kernel's result.
    for (size_t i = 0; i < out.size(); i += 1 + out.size() / 1000)
      if (std::fabs(out[i] - expected(in[i], fmas)) > 1e-5f * (1 + std::fabs(out[i])))
        return printf("timing WRONG: the output on the host is not the kernel's result (element %zu: %g, expected %g): "
                      "was it copied back?\n", i, out[i], expected(in[i], fmas)), 1;

    // The project's timer on the same work: CUDA events around the launch, the host clock
    // around copy in, kernel and copy out, one warm-up run, the median of `repeat` runs.
    core::DeviceArray<float> d_in, d_out;
    d_in.resize(in.size());
    d_out.resize(in.size());
    core::Phases phases;
    phases.load = [&] { CUDA_CHECK(cudaMemcpy(d_in.data(), in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice)); };
    phases.compute = [&] { work.launch(d_in.data(), d_out.data()); };
    phases.store = [&] { CUDA_CHECK(cudaMemcpy(out.data(), d_out.data(), out.size() * sizeof(float), cudaMemcpyDeviceToHost)); };
    auto timer = core::make_device_timer();
    const core::TimedRuns ref = core::time_runs(phases, *timer, 1, repeat, false);

    if (!quiet) {
      printf("your figures:       kernel %.4f ms, end-to-end %.4f ms (%zu and %zu samples, %lld launches)\n",
             m.kernel_ms, m.end_to_end_ms, m.kernel_samples_ms.size(), m.end_to_end_samples_ms.size(), student_launches);
      printf("the project's timer: kernel %.4f ms, end-to-end %.4f ms (median of %d runs after 1 warm-up)\n",
             ref.kernel_ms.median, ref.total_ms.median, repeat);
    }
    // The rules, in the order a wrong timer usually breaks them.
    auto wrong = [](const std::string& why) { printf("timing WRONG: %s\n", why.c_str()); return 1; };
    if (int(m.kernel_samples_ms.size()) != repeat || int(m.end_to_end_samples_ms.size()) != repeat)
      return wrong("return exactly " + std::to_string(repeat) + " samples of each kind (got " +
                   std::to_string(m.kernel_samples_ms.size()) + " and " + std::to_string(m.end_to_end_samples_ms.size()) + ")");
    if (student_launches <= repeat)
      return wrong("no untimed warm-up run: " + std::to_string(student_launches) + " launches for " +
                   std::to_string(repeat) + " timed runs");
    for (double s : m.kernel_samples_ms)
      if (!(s > 0)) return wrong("a kernel sample is not a positive time");
    const double km = median_of(m.kernel_samples_ms), em = median_of(m.end_to_end_samples_ms);
    if (std::fabs(m.kernel_ms - km) > 1e-9 * km || std::fabs(m.end_to_end_ms - em) > 1e-9 * em)
      return wrong("the reported figures are not the medians of your samples (kernel median " + std::to_string(km) +
                   " ms, end-to-end median " + std::to_string(em) + " ms)");
    const double kernel_ratio = m.kernel_ms / ref.kernel_ms.median, e2e_ratio = m.end_to_end_ms / ref.total_ms.median;
    if (std::fabs(kernel_ratio - 1) > 0.10)
      return wrong("kernel time disagrees with the project's timer: " + std::to_string(kernel_ratio) +
                   "x (allowed: within 10 %; is another program using the GPU? nvidia-smi says)");
    if (std::fabs(e2e_ratio - 1) > 0.25)
      return wrong("end-to-end time disagrees with the project's timer: " + std::to_string(e2e_ratio) +
                   "x (allowed: within 25 %; is another program using the GPU or the bus? nvidia-smi says)");
    printf("timing agrees: kernel %.3fx, end-to-end %.3fx the project's timer\n", kernel_ratio, e2e_ratio);
    return 0;
  });
}

// The one timer of the project: a host clock, summary statistics, and the timed-run loop
// that every track harness uses (warm-up, then repeated runs; kernel time from the
// platform's KernelTimer, end-to-end time from the host clock after synchronization).
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

namespace core {

class HostClock {
 public:
  HostClock() : start_(std::chrono::steady_clock::now()) {}
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

struct Stats {
  double median = 0, min = 0, max = 0;
};
Stats summarize(std::vector<double> samples);

// Brackets the step's compute phase. CPU steps get the host clock; GPU steps get CUDA
// events on the default stream (platform_cuda.cu).
class KernelTimer {
 public:
  virtual ~KernelTimer() = default;
  virtual void start() = 0;
  virtual double stop_ms() = 0;  // waits for the bracketed work to finish
};
std::unique_ptr<KernelTimer> make_host_timer();

// What a step does once per timed run, split into the phases the harness times.
struct Phases {
  std::function<void()> load;     // allocate on first use, copy inputs to the device
  std::function<void()> compute;  // the step's algorithm: this is the kernel time
  std::function<void()> store;    // copy results back (and synchronize)
};

struct TimedRuns {
  Stats kernel_ms, total_ms;
  int repeat = 0;
};

// Runs phases `warmup` times untimed, then `repeat` times timed.
TimedRuns time_runs(const Phases& phases, KernelTimer& timer, int warmup, int repeat,
                    bool show_progress);

}  // namespace core

// The one timer of the project: a host clock, summary statistics, the timed-run loop
// that every track harness uses (warm-up, then repeated runs; kernel time from the
// platform's KernelTimer, end-to-end time from the host clock after synchronization), and
// the per-phase times a GPU step may record inside its own compute (PhaseTimer).
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct CUstream_st;  // a CUDA stream (cudaStream_t is CUstream_st*), opaque to host-only code

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

// Named phases of a GPU step's work, for its record's breakdown: begin(name, stream) ... end()
// brackets a phase with CUDA events on `stream` (the default stream unless named) and an NVTX
// range of the same name, so Nsight Systems shows the same names. totals() waits for the
// recorded work and returns milliseconds per name, summed over the phases since reset(). A
// phase on another stream overlaps the others: its total is its own time, not a share of the
// whole. Defined by the CUDA platform (platform_cuda.cu), beside the event KernelTimer.
class PhaseTimer {
 public:
  PhaseTimer();
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  void reset();
  void begin(const char* name, CUstream_st* stream = nullptr);
  void end();
  const std::map<std::string, double>& totals();

 private:
  struct Events;  // the CUDA events, created as phases need them and reused after reset()
  std::unique_ptr<Events> events_;
  std::map<std::string, double> totals_;
};

// What a step does once per timed run, split into the phases the harness times.
struct Phases {
  std::function<void()> load;     // allocate on first use, copy inputs to the device
  std::function<void()> compute;  // the step's algorithm: this is the kernel time
  std::function<void()> store;    // copy results back (and synchronize)
};

struct TimedRuns {
  Stats kernel_ms, total_ms;
  // The load and store phases of the timed runs (the copies to and from the device), and the
  // very first run's end-to-end time, warm-up or timed: what a process pays once (first
  // allocations, library plans, lazily loaded kernels) is the first run less a later one.
  Stats load_ms, store_ms;
  double first_ms = 0;
  int repeat = 0;
};

// Runs phases `warmup` times untimed, then `repeat` times timed.
TimedRuns time_runs(const Phases& phases, KernelTimer& timer, int warmup, int repeat,
                    bool show_progress);

}  // namespace core

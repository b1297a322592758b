#include "core/timing.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/progress.hpp"

namespace core {

Stats summarize(std::vector<double> s) {
  Stats st;
  if (s.empty()) return st;
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  st.median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  st.min = s.front();
  st.max = s.back();
  return st;
}

namespace {
class HostTimer final : public KernelTimer {
 public:
  void start() override { clock_ = HostClock(); }
  double stop_ms() override { return clock_.elapsed_ms(); }

 private:
  HostClock clock_;
};
}  // namespace

std::unique_ptr<KernelTimer> make_host_timer() { return std::make_unique<HostTimer>(); }

TimedRuns time_runs(const Phases& phases, KernelTimer& timer, int warmup, int repeat,
                    bool show_progress) {
  Progress progress("run", warmup + repeat, show_progress);
  double first_ms = 0;
  for (int i = 0; i < warmup; ++i) {
    still_running_stage("warm-up " + std::to_string(i + 1) + " of " + std::to_string(warmup));
    HostClock wall;
    phases.load();
    phases.compute();
    phases.store();
    if (i == 0) first_ms = wall.elapsed_ms();
    progress.advance();
  }
  std::vector<double> kernel, total, load, store;
  for (int i = 0; i < repeat; ++i) {
    still_running_stage("repeat " + std::to_string(i + 1) + " of " + std::to_string(repeat));
    HostClock wall;
    phases.load();
    load.push_back(wall.elapsed_ms());
    timer.start();
    phases.compute();
    kernel.push_back(timer.stop_ms());
    HostClock stored;
    phases.store();
    store.push_back(stored.elapsed_ms());
    total.push_back(wall.elapsed_ms());
    if (warmup == 0 && i == 0) first_ms = total.back();
    progress.advance();
  }
  TimedRuns r;
  r.kernel_ms = summarize(kernel);
  r.total_ms = summarize(total);
  r.load_ms = summarize(load);
  r.store_ms = summarize(store);
  r.first_ms = first_ms;
  r.repeat = repeat;
  return r;
}

}  // namespace core

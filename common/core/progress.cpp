#include "core/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace core {

Progress::Progress(std::string label, long total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && total > 1 && isatty(2)) {}

Progress::~Progress() {
  if (enabled_ && last_percent_ >= 0) fprintf(stderr, "\r%*s\r", int(label_.size()) + 12, "");
}

void Progress::advance(long n) {
  done_ += n;
  if (!enabled_) return;
  const int percent = int(100 * done_ / total_);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  fprintf(stderr, "\r%s %3d%%", label_.c_str(), percent);
  fflush(stderr);
}

namespace {

// The stage the living StillRunning names; set from the program's thread, read by the watcher.
std::mutex stage_mutex;
std::string stage = "starting";

double period_seconds() {
  const char* text = std::getenv("STEPWISE_STILL_RUNNING_S");
  if (!text || !*text) return 10;
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  return end != text && *end == '\0' && s > 0 ? s : 10;
}

}  // namespace

void still_running_stage(const std::string& what) {
  const std::lock_guard<std::mutex> lock(stage_mutex);
  stage = what;
}

StillRunning::StillRunning(std::string program, bool enabled)
    : program_(std::move(program)), start_(std::chrono::steady_clock::now()), period_(period_seconds()) {
  still_running_stage("starting");
  if (enabled) thread_ = std::thread([this] { watch(); });
}

StillRunning::~StillRunning() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  done_cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void StillRunning::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (long lines = 1;; ++lines) {
    const auto due = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(lines * period_);
    if (done_cv_.wait_until(lock, due, [this] { return done_; })) return;
    std::string what;
    {
      const std::lock_guard<std::mutex> stage_lock(stage_mutex);
      what = stage;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    // One write of the whole line (stdio locks the stream per call): it never splits another
    // line; on a terminal it first clears Progress's percentage, drawn again when it next moves.
    fprintf(stderr, "%s%s: still running: %s, %.0f s\n", isatty(2) ? "\r\033[K" : "", program_.c_str(), what.c_str(),
            seconds);
    fflush(stderr);
  }
}

}  // namespace core

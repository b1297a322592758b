// Signs of life on stderr for long runs. Progress draws a percentage in place, only when stderr
// is a terminal (never in logs or tests). StillRunning writes one line every period (10 s) once
// a run has taken that long, on a terminal or in a log, naming what the program is doing:
//   mc_00_cpu: still running: repeat 2 of 5, 31 s
// A run shorter than one period writes nothing.
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace core {

class Progress {
 public:
  Progress(std::string label, long total, bool enabled);
  ~Progress();
  void advance(long n = 1);

 private:
  std::string label_;
  long total_, done_ = 0;
  bool enabled_;
  int last_percent_ = -1;
};

// While one lives (and is enabled), a thread wakes once a period and writes the line; the
// period is STEPWISE_STILL_RUNNING_S seconds where that is set to a positive number, else 10.
// The thread only sleeps between lines: the timed runs do not feel it.
class StillRunning {
 public:
  StillRunning(std::string program, bool enabled);
  ~StillRunning();
  StillRunning(const StillRunning&) = delete;
  StillRunning& operator=(const StillRunning&) = delete;

 private:
  void watch();
  std::string program_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::duration<double> period_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// What the program is doing now ("repeat 2 of 5", "validating"), for the line of the
// StillRunning that lives, if one does; otherwise nothing.
void still_running_stage(const std::string& what);

}  // namespace core

// Progress on stderr for long runs, only when stderr is a terminal (never in logs or tests).
#pragma once
#include <string>

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

}  // namespace core

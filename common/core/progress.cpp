#include "core/progress.hpp"

#include <unistd.h>

#include <cstdio>

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

}  // namespace core

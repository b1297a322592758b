#include "core/files.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace core {

std::ifstream open_input_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw UsageError(path + ": cannot open file (" + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw UsageError(path + ": is a folder, not a file");
  if (!S_ISREG(st.st_mode))
    throw UsageError(path + ": not a regular file (" +
                     (S_ISFIFO(st.st_mode) ? std::string("a pipe") : std::string("a device or socket")) +
                     "); give the path of a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open file (unreadable)");
  return in;
}

}  // namespace core

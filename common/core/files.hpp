// Opening input files: only regular files. A pipe would block the reader forever and a folder
// reads as an empty stream, so both are refused up front with what the path really is.
#pragma once
#include <fstream>
#include <string>

namespace core {

// Opens `path` for binary reading; throws UsageError "PATH: what is wrong" when it is missing,
// unreadable, a folder, or not a regular file (a FIFO, a device, a socket).
std::ifstream open_input_file(const std::string& path);

}  // namespace core

// Exit codes and the exceptions that carry them to main().
#pragma once
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace core {

enum ExitCode : int {
  kOk = 0,
  kValidationFailed = 1,
  kBadUsage = 2,   // bad flag, bad input file, absurd size
  kRuntime = 3,    // CUDA or other runtime failure
  kNoGpu = 77,     // meson reports SKIP
};

// Bad usage or bad input: the message names the file or flag and what is wrong.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A runtime call failed (CUDA, I/O after validation): the message names the call.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// No usable GPU: the step cannot run here, which is not a failure.
struct NoGpuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// Runs body() and turns the exceptions above into their exit codes with one line on stderr.
template <class Body>
int exit_code_of(const char* program, Body&& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    fprintf(stderr, "%s: error: %s\n", base_name(program), e.what());
    return kBadUsage;
  } catch (const NoGpuError& e) {
    fprintf(stderr, "%s: skipped: %s\n", base_name(program), e.what());
    return kNoGpu;
  } catch (const RuntimeError& e) {
    fprintf(stderr, "%s: runtime error: %s\n", base_name(program), e.what());
    return kRuntime;
  } catch (const std::bad_alloc&) {
    fprintf(stderr, "%s: runtime error: out of host memory\n", base_name(program));
    return kRuntime;
  } catch (const std::exception& e) {
    // Anything else a library throws (a file system call that failed, say) is a runtime error
    // with its own words, never an abort without the program's name.
    fprintf(stderr, "%s: runtime error: %s\n", base_name(program), e.what());
    return kRuntime;
  }
}

}  // namespace core

#include "core/ranks.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <functional>

#include "core/error.hpp"

namespace core {

namespace {

// A whole non-negative number, or UsageError naming the variable.
int whole_number(const char* name, const char* text) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || v < 0 || v > INT_MAX)
    throw UsageError(std::string(name) + "=" + text + ": not a whole number >= 0");
  return int(v);
}

struct Names {
  const char *rank, *size, *local, *launcher;
};
// The launchers' variables, in the order they are believed (an srun that starts a program
// under mpirun's wrapper sets both: the innermost launcher is listed first).
constexpr Names kLaunchers[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "mpirun"},
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "pmi"},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "slurm"},
    {"RANK", "WORLD_SIZE", "LOCAL_RANK", "env"},
};

// A variable's value, or nullptr where it is unset or empty.
const char* value_of(const std::function<const char*(const char*)>& lookup, const char* name) {
  const char* v = lookup(name);
  return v && *v ? v : nullptr;
}

}  // namespace

Ranks ranks_from(const std::function<const char*(const char*)>& lookup) {
  auto get = [&](const char* name) { return value_of(lookup, name); };
  for (const Names& n : kLaunchers) {
    const char* rank = get(n.rank);
    const char* size = get(n.size);
    if (!rank && !size) continue;
    if (!rank || !size)
      throw UsageError(std::string(rank ? n.rank : n.size) + " is set but " + (rank ? n.size : n.rank) +
                       " is not: the launcher must say both which process this is and how many there are");
    Ranks r;
    r.rank = whole_number(n.rank, rank);
    r.size = whole_number(n.size, size);
    if (r.size < 1) throw UsageError(std::string(n.size) + "=" + size + ": a run has at least one process");
    if (r.rank >= r.size)
      throw UsageError(std::string(n.rank) + "=" + rank + " with " + n.size + "=" + size +
                       ": the rank must be below the number of processes");
    // Without a local rank (a launcher that does not say), one host is assumed: the rank.
    const char* local = get(n.local);
    r.local_rank = local ? whole_number(n.local, local) : r.rank;
    r.launcher = n.launcher;
    return r;
  }
  return Ranks{};
}

const Ranks& ranks() {
  static const Ranks r = ranks_from([](const char* name) { return std::getenv(name); });
  return r;
}

std::string root_address(const std::function<const char*(const char*)>& lookup) {
  auto get = [&](const char* name) { return value_of(lookup, name); };
  if (const char* a = get("STEPWISE_ROOT")) return a;
  if (const char* host = get("MASTER_ADDR")) {
    const char* port = get("MASTER_PORT");
    return std::string(host) + ":" + (port ? port : "29517");
  }
  // A job id the launcher gives every process of one run alike.
  for (const char* name : {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "PMI_JOBID", "SLURM_JOB_ID"}) {
    if (const char* id = get(name)) {
      unsigned long h = 5381;  // djb2: the same id gives the same port in every process
      for (const char* c = id; *c; ++c) h = h * 33 + static_cast<unsigned char>(*c);
      return "127.0.0.1:" + std::to_string(20000 + h % 10000);
    }
  }
  return "127.0.0.1:29517";
}

}  // namespace core

// The processes of one run, one per GPU. A launcher starts them (mpirun, srun, torchrun or a
// shell loop) and says in the environment which one each is; no MPI library is linked, so the
// same program runs alone, under any of them, and across hosts (README.md, "Several GPUs").
#pragma once
#include <functional>
#include <string>

namespace core {

struct Ranks {
  int rank = 0;        // this process, 0 .. size - 1
  int size = 1;        // processes in the run
  int local_rank = 0;  // this process among those on its host: the GPU it drives
  std::string launcher = "none";  // where the numbers came from: "none", "mpirun", "pmi", "slurm", "env"
  bool root() const { return rank == 0; }
};

// Reads the launcher's variables through `lookup` (nullptr or "" when unset), in this order:
// Open MPI's OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK} (mpirun); PMI_RANK / PMI_SIZE /
// MPI_LOCALRANKID (MPICH's and Intel MPI's mpirun); SLURM_PROCID / SLURM_NTASKS /
// SLURM_LOCALID (srun); RANK / WORLD_SIZE / LOCAL_RANK (torchrun, or set by hand). None set:
// one process. Inconsistent values (a rank outside 0 .. size - 1, a size below 1, a number
// that is not one) throw UsageError naming the variable.
Ranks ranks_from(const std::function<const char*(const char*)>& lookup);

// ranks_from(getenv), read once.
const Ranks& ranks();

// Where rank 0 waits for the others to fetch what it shares (the NCCL id): STEPWISE_ROOT as
// host:port, else MASTER_ADDR and MASTER_PORT (torchrun's), else 127.0.0.1 and a port derived
// from the launcher's job id (two jobs on one host then rarely meet), else 127.0.0.1:29517.
std::string root_address(const std::function<const char*(const char*)>& lookup);

}  // namespace core

#include "core/communicator.cuh"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/rendezvous.hpp"

namespace core {

ncclComm_t world_communicator() {
  // Made once and kept to the end of the process: destroying it from a static destructor
  // would run after the CUDA runtime may have gone.
  static const ncclComm_t comm = [] {
    const Ranks& r = ranks();
    // The all-reduces here are at most a few MB; NVLink SHARP (multicast) buys them nothing.
    // Off unless the environment turns it on.
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    ncclUniqueId id{};
    if (r.root()) NCCL_CHECK(ncclGetUniqueId(&id));
    std::vector<unsigned char> bytes(sizeof id);
    std::memcpy(bytes.data(), &id, sizeof id);
    bytes = share_from_root(r, root_address([](const char* name) { return std::getenv(name); }), bytes);
    if (bytes.size() != sizeof id) throw RuntimeError("rendezvous: rank 0 sent an NCCL id of the wrong size");
    std::memcpy(&id, bytes.data(), sizeof id);
    ncclComm_t c = nullptr;
    NCCL_CHECK(ncclCommInitRank(&c, r.size, id, r.rank));
    return c;
  }();
  return comm;
}

void wait_for_ranks(cudaStream_t stream) {
  // The summed integer is set once and never read: only the all-reduce's completion matters.
  // Kept to the end of the process, as the communicator is.
  static int32_t* const token = [] {
    int32_t* t = nullptr;
    CUDA_CHECK(cudaMalloc(&t, sizeof *t));
    CUDA_CHECK(cudaMemset(t, 0, sizeof *t));
    return t;
  }();
  NCCL_CHECK(ncclAllReduce(token, token, 1, ncclInt32, ncclSum, world_communicator(), stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace core

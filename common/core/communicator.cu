#include "core/communicator.cuh"

#include <cstdlib>
#include <cstring>
#include <vector>

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

}  // namespace core

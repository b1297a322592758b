// How the processes of a run first meet: rank 0 hands the same few bytes (NCCL's unique id)
// to every other rank over one TCP connection each, as torchrun's store does. After that NCCL
// carries everything; this is used once per run.
#pragma once
#include <string>
#include <vector>

#include "core/ranks.hpp"

namespace core {

// On rank 0: listens at `address`'s port (every interface), gives `bytes` to each of the
// other ranks.size - 1 ranks as they connect, and returns `bytes`. On any other rank: connects
// to `address` (retrying while rank 0 is not yet listening), returns what rank 0 gave. A
// connection that does not speak this protocol or belongs to a run of another size is dropped.
// Throws UsageError for an address that is not host:port, RuntimeError when rank 0 cannot
// listen or the others do not meet it within `timeout_s`.
std::vector<unsigned char> share_from_root(const Ranks& ranks, const std::string& address,
                                           const std::vector<unsigned char>& bytes, double timeout_s = 120);

}  // namespace core

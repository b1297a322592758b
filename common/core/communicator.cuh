// The NCCL communicator of a multi-GPU step: every rank of the run (core/ranks.hpp), one GPU
// each, the GPU the harness selected (the rank's local rank). Made on first use: rank 0 asks
// NCCL for a unique id, hands it to the others (core/rendezvous.hpp), and all join. With one
// rank it is a communicator of one, so the same step source runs on one GPU unchanged.
#pragma once
#include <nccl.h>

#include "core/nccl_check.cuh"
#include "core/ranks.hpp"

namespace core {

// All ranks of this run. The first call blocks until every rank has made it.
ncclComm_t world_communicator();

}  // namespace core

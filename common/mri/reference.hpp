// The independent reference: F^H d or Q in double precision with libm sin/cos, on the CPU
// (OpenMP over voxels). For large problems it is evaluated on a seeded random sample of
// voxels; the results record says how many were compared.
#pragma once
#include <complex>
#include <vector>

#include "mri/problem.hpp"

namespace mri {

// Voxels the reference evaluates: all of them when numX * numK is at most `budget` pairs;
// otherwise edge_voxels() plus `sample` distinct others drawn with `seed`, in increasing
// order. The sample depends on the voxels (count and grid) and the seed only, never on the
// samples: a `--samples` prefix of a problem is checked on the same voxels as the whole.
std::vector<size_t> reference_voxels(const Problem& p, uint64_t seed, double budget = 1.5e8,
                                     size_t sample = 2000);

// The voxels where GPU steps go wrong when they go wrong at an edge: the first and last
// voxel of the volume, of the first two and last two groups of G consecutive voxels for every
// block shape G = 32 * 2^j and 96 * 2^j up to 16,384, of every warp in the last 1,024 voxels,
// and on a grid of every plane and of every row of the first and last planes (sorted).
std::vector<size_t> edge_voxels(const Problem& p);

std::vector<std::complex<double>> reference(const Problem& p, Kernel kernel,
                                            const std::vector<size_t>& voxels);

}  // namespace mri

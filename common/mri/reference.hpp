// The independent reference: F^H d or Q in double precision with libm sin/cos, on the CPU
// (OpenMP over voxels). For large problems it is evaluated on a seeded random sample of
// voxels; the results record says how many were compared.
#pragma once
#include <complex>
#include <vector>

#include "problem.hpp"

namespace mri {

// Voxels the reference evaluates: all of them when numX * numK is at most `budget`
// pairs, otherwise `sample` distinct voxels drawn with `seed`, in increasing order.
std::vector<size_t> reference_voxels(const Problem& p, uint64_t seed, double budget = 1.5e8,
                                     size_t sample = 2000);

std::vector<std::complex<double>> reference(const Problem& p, Kernel kernel,
                                            const std::vector<size_t>& voxels);

}  // namespace mri

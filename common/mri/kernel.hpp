// Which sum a step computes: F^H d or Q (problem.hpp). Apart from the problem, whose record
// params are JSON, so that the steps' compile (nvcc) does not read the JSON library.
#pragma once

namespace mri {

enum class Kernel { fhd, q };
const char* kernel_name(Kernel k);

}  // namespace mri

// The reconstruction's complex vectors and what conjugate gradient hands back, shared by the
// CPU solver (recon.hpp) and the GPU one (recon_gpu.hpp). Apart from recon.hpp, which reads the
// problem and with it the JSON library, so that the GPU solver's nvcc compile does not.
#pragma once
#include <complex>
#include <vector>

namespace mri {

using cvec = std::vector<std::complex<double>>;

struct CgResult {
  cvec rho;
  std::vector<double> residuals;  // ||b - A rho_i|| / ||b|| after iteration i (1-based)
};

}  // namespace mri

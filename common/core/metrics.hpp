// Error metrics of a computed array against a reference, as in Stone et al. (2008):
// relative L2 error ||I - I0|| / ||I0||, max abs error, MSE,
// PSNR = 20 log10(max|I0| / sqrt(MSE)) and SNR = 20 log10(||I0|| / ||I - I0||).
// Complex arrays are compared as complex numbers (|.| is the modulus).
#pragma once
#include <complex>
#include <vector>

namespace core {

struct ErrorMetrics {
  double rel_l2 = 0, max_abs = 0, mse = 0, psnr_db = 0, snr_db = 0;
  size_t count = 0;
  bool finite = true;  // false when the test array holds NaN or Inf
};

ErrorMetrics compare(const std::vector<std::complex<double>>& reference,
                     const std::vector<std::complex<double>>& test);
ErrorMetrics compare(const std::vector<double>& reference, const std::vector<double>& test);

}  // namespace core

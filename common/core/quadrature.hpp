// Gauss-Legendre quadrature on [-1, 1]: the one rule the references integrate with (mc's exact
// solution, epic's prolate taper, mri's exponential-of-semicircle transform).
#pragma once
#include <vector>

namespace core {

struct Quadrature {
  std::vector<double> x, w;  // nodes from +1 down, weights
};

// n nodes and weights, by Newton's method on P_n from Chebyshev guesses: exact for polynomials
// of degree up to 2n - 1.
Quadrature gauss_legendre(int n);

}  // namespace core

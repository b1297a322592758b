// The exact expected heat of the tiny_mc problem, independent of any Monte Carlo.
//
// One-speed transport from an isotropic point source in an infinite medium that scatters
// isotropically with albedo c = mu_s / mu_t. Lengths are in mean free paths, k in mu_t.
// Let F(r) be the density of collisions (every interaction, scattering or absorption, per
// launched photon). The expected heat density is (1 - c) F(r) = mu_a * fluence: tiny_mc
// deposits (1 - c) w at each interaction and the weights w keep that expectation exact.
//
//   first collisions   F1(r) = e^{-r} / (4 pi r^2)  with 3D transform  L(k) = arctan(k) / k
//   all collisions     F^(k) = L + c L^2 + c^2 L^3 + ... = L / (1 - c L)
//
// The first collisions are integrated over a shell in closed form (e^{-r1} - e^{-r2}).
// The rest, Fc^ = c L^2 / (1 - c L), is inverted radially (Machida 2015, arXiv:1510.00828,
// for the Fourier route): for a spherically symmetric f the mass inside radius R is
//
//   M(R) = (2 / pi) * int_0^inf f^(k) (sin kR - kR cos kR) / k dk,
//
// the shell integral of f(r) = 1/(2 pi^2 r) int k sin(kr) f^(k) dk done analytically in r,
// so no 1/r singularity is ever evaluated. Fc^ ~ c pi^2 / (4 k^2) at large k; that tail is
// removed as A / (1 + k^2), whose density A e^{-r} / (4 pi r) has the shell mass in closed
// form, and the rest (~ k^-3) is integrated by Gauss-Legendre panels up to k = 2000.
// tests/mc checks the result against a singular-eigenfunction (Case) form to 1e-9 and
// against a brute-force real-space solve of the transport equation.
#pragma once
#include <functional>
#include <vector>

#include "mc/problem.hpp"

namespace mc {

// L(k) = arctan(k) / k: transform of the first-flight collision density (mu_t = 1).
double first_flight_transform(double k);

// (2/pi) int_0^kmax fhat(k) (sin kR - kR cos kR)/k dk for every R in `radii` (mass of the
// density with transform fhat inside radius R). fhat must be smooth on [0, kmax] and decay
// at least like k^-2 for the truncation at kmax to be harmless.
std::vector<double> mass_within(const std::function<double(double)>& fhat,
                                const std::vector<double>& radii, double kmax = 2000.0);

// Mass of the collisions after the first (all orders) inside each radius, per launched
// photon; tends to c / (1 - c) as R -> infinity.
std::vector<double> collided_mass_within(double albedo, const std::vector<double>& radii);

// Expected fraction of the launched weight absorbed in each shell of the problem; the last
// entry is everything beyond the inner shells. Sums to 1.
std::vector<double> exact_shell_absorption(const Problem& p);

// Expected interactions per photon (deterministic weights, roulette survival p).
double expected_interactions(const Problem& p);

}  // namespace mc

// The 3D Shepp-Logan head phantom (ellipsoids after Kak & Slaney, "Principles of
// Computerized Tomographic Imaging", ch. 3), scaled into the unit field of view
// [-0.5, 0.5)^3, and its analytic Fourier transform. K-space data simulated from the
// analytic transform avoids the "inverse crime" of sampling a discretized phantom.
#pragma once
#include <complex>
#include <vector>

namespace mri {

struct Ellipsoid {
  double x0, y0, z0;  // centre (field-of-view units)
  double a, b, c;     // semi-axes
  double theta_deg;   // rotation about z
  double rho;         // added density
};

const std::vector<Ellipsoid>& shepp_logan_3d();

// Density at a point (sum of the densities of the ellipsoids that contain it).
double phantom_density(double x, double y, double z);

// F(k) = integral of f(x) e^{-i 2 pi k.x} dx, k in cycles per field of view.
std::complex<double> phantom_transform(double kx, double ky, double kz);

}  // namespace mri

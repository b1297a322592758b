// epic 00_cpu: the EPIC imager as a plain CPU program. For every sample of every channel, each
// polarization's voltages are gridded onto the N x N aperture grid, inverse-FFT'd (FFTW, single
// precision) into the electric field on the sky, and the fields are cross-multiplied into the
// polarization products, which accumulate over the gulps. With --no-autos the stands'
// autocorrelations, summed over the samples, are weighted by each stand's kernel beam and
// subtracted pixel by pixel: exactly the a = b terms of the image. The grid
// correction multiplies the finished image. OpenMP runs the channels in parallel: a channel's
// image depends on no other channel.
#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/portable.hpp"
#include "epic/step.hpp"
#include "epic/voltage.hpp"

namespace epic {
namespace {

#include <host.hpp>

}  // namespace

StepInfo step_info() { return {"00_cpu", "CPU: grid, FFTW, cross-multiply, accumulate; OpenMP over channels", false, Accuracy::fp32, {}}; }

std::unique_ptr<Step> make_step(const core::Tunables&) { return std::make_unique<Cpu>(); }

}  // namespace epic

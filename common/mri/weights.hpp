// The per-sample weight of the sum (the lecture's cmpMu; Parboil's ComputePhiMag):
//   F^H d: mu = conj(phi) d        Q: |phi|^2
// Host and device code share this one definition.
#pragma once
#include "core/portable.hpp"

namespace mri {

STEPWISE_HOST_DEVICE void sample_weight(bool q, float phiR, float phiI, float dR, float dI,
                                        float& rMu, float& iMu) {
  if (q) {
    rMu = phiR * phiR + phiI * phiI;
    iMu = 0.0f;
  } else {
    rMu = phiR * dR + phiI * dI;
    iMu = phiR * dI - phiI * dR;
  }
}

}  // namespace mri

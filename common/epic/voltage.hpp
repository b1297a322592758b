// The F-engine's sample: one byte per complex voltage, 4-bit two's complement real part in the
// high nibble, imaginary part in the low nibble (LWA's "4+4-bit" format). Host and device
// code decode with the same functions, so every step reads the bytes exactly as delivered.
#pragma once
#include <cstdint>

#include "core/portable.hpp"

namespace epic {

// Sign extension by arithmetic shifts of a signed byte: the high nibble is already in place;
// the low nibble is moved up first.
STEPWISE_HOST_DEVICE int nibble_re(uint8_t b) { return int(int8_t(b)) >> 4; }
STEPWISE_HOST_DEVICE int nibble_im(uint8_t b) { return int(int8_t(uint8_t(b << 4))) >> 4; }

// Packs levels in [-8, 7] (the F-engine clips to [-7, 7]).
inline uint8_t pack_nibbles(int re, int im) { return uint8_t(((re & 0xf) << 4) | (im & 0xf)); }

// The largest level the quantizer emits: the F-engine keeps the range symmetric and never
// writes -8.
constexpr int kMaxLevel = 7;

}  // namespace epic

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011):
// a counter-based generator. The output is a bijective scramble of a 128-bit counter under
// a 64-bit key, so any number of independent streams exist without state or seeding: a
// stream is a range of counters. It passes BigCrush and is the generator of cuRAND's
// Philox4_32_10. Usable on the host and, compiled by nvcc, on the device.
//
// Checked against the published known-answer vectors in tests/mc/test_mc.cpp.
#pragma once
#include <cstdint>

#include "core/portable.hpp"

namespace mc {

struct Counter {
  uint32_t c[4];
};
struct Key {
  uint32_t k[2];
};

STEPWISE_HOST_DEVICE void philox_mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
#if defined(__CUDA_ARCH__)
  hi = __umulhi(a, b);
  lo = a * b;
#else
  const uint64_t p = uint64_t(a) * b;
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
#endif
}

// Rounds of: two 32x32->64 multiplies, the high halves xor-ed with the other words and the
// round key; the key is bumped by the Weyl constants between rounds. Ten is the standard
// (cuRAND's Philox4_32_10 and every step here up to 05); Salmon et al. find Philox4x32
// Crush-resistant (BigCrush passes on many keys and streams) from 7 rounds on, and 06 on use
// 7 (06's README says why).
template <int Rounds>
STEPWISE_HOST_DEVICE Counter philox4x32(Counter ctr, Key key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < Rounds; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(kM0, ctr.c[0], hi0, lo0);
    philox_mulhilo(kM1, ctr.c[2], hi1, lo1);
    ctr = {{hi1 ^ ctr.c[1] ^ key.k[0], lo1, hi0 ^ ctr.c[3] ^ key.k[1], lo0}};
    key.k[0] += kW0;
    key.k[1] += kW1;
  }
  return ctr;
}

STEPWISE_HOST_DEVICE Counter philox4x32_10(Counter ctr, Key key) { return philox4x32<10>(ctr, key); }
STEPWISE_HOST_DEVICE Counter philox4x32_7(Counter ctr, Key key) { return philox4x32<7>(ctr, key); }

STEPWISE_HOST_DEVICE Key philox_key(uint64_t seed) { return {{uint32_t(seed), uint32_t(seed >> 32)}}; }

// A float uniform in (0, 1] from the top 24 bits: never 0, so -log() is always finite.
STEPWISE_HOST_DEVICE float uniform_0_1(uint32_t bits) { return float((bits >> 8) + 1u) * 0x1p-24f; }

// Sequential draws from one stream, four at a time: counter (n, stream_lo, stream_hi, tag).
// The CPU steps give every batch of photons its own stream, so the output does not depend
// on how batches are spread over threads.
class PhiloxStream {
 public:
  STEPWISE_HOST_DEVICE PhiloxStream(uint64_t seed, uint64_t stream, uint32_t tag)
      : key_(philox_key(seed)), ctr_{{0u, uint32_t(stream), uint32_t(stream >> 32), tag}} {}
  STEPWISE_HOST_DEVICE uint32_t next_bits() {
    if (used_ == 4) {
      block_ = philox4x32_10(ctr_, key_);
      ++ctr_.c[0];
      used_ = 0;
    }
    return block_.c[used_++];
  }
  STEPWISE_HOST_DEVICE float uniform() { return uniform_0_1(next_bits()); }  // (0, 1]

 private:
  Key key_;
  Counter ctr_;
  Counter block_{};
  int used_ = 4;
};

// Stream tags (the counter's last word) keep the CPU and GPU streams of one seed apart.
constexpr uint32_t kTagCpu = 1u;
constexpr uint32_t kTagGpu = 0u;

}  // namespace mc

// SHA-256 rounds on the x86 SHA extensions. The state is kept as the two
// vectors the sha256rnds2 instruction wants, ABEF and CDGH; every group of
// four rounds adds its constants to four message words, and the schedule
// beyond the first 16 words comes from sha256msg1/sha256msg2.
#include "crypto/sha256_blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>
// glibc 2.36's header spells its return type _Bool, which clang's C++ lacks.
#if defined(__clang__)
#define _Bool bool
#include <sys/platform/x86.h>
#undef _Bool
#else
#include <sys/platform/x86.h>
#endif

namespace aasm::sha256_blocks {
namespace {

#define AASM_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

AASM_SHA_TARGET void compress_sha_ni(uint32_t state[8], const uint8_t* blocks, size_t count) {
  // Message bytes are big-endian words.
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0]));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4]));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xb1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1b);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xf0);

  for (; count > 0; --count, blocks += 64) {
    const __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i w[4];  // the last 16 message words, four per vector, rolling
    for (int group = 0; group < 16; ++group) {
      __m128i& words = w[group & 3];
      if (group < 4) {
        words = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks + 16 * group)), byte_swap);
      } else {
        // W[t..t+3] from W[t-16..t-13] (this slot's old words), W[t-12..t-9],
        // W[t-7..t-4] and W[t-4..t-1].
        const __m128i previous = w[(group - 1) & 3], before_previous = w[(group - 2) & 3];
        __m128i next = _mm_sha256msg1_epu32(words, w[(group - 3) & 3]);
        next = _mm_add_epi32(next, _mm_alignr_epi8(previous, before_previous, 4));
        words = _mm_sha256msg2_epu32(next, previous);
      }
      __m128i k_plus_w = _mm_add_epi32(words, _mm_load_si128(reinterpret_cast<const __m128i*>(&kRoundConstants[4 * group])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k_plus_w);
      k_plus_w = _mm_shuffle_epi32(k_plus_w, 0x0e);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, k_plus_w);
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }

  const __m128i feba = _mm_shuffle_epi32(abef, 0x1b);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);
  dcba = _mm_blend_epi16(feba, dchg, 0xf0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), hgfe);
}

}  // namespace

// From the features glibc found at start-up: a CPUID instruction of our own
// would trap to the hypervisor in a VM and cost tens of microseconds.
CompressFn hardware() {
  const bool usable = CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSSE3) && CPU_FEATURE_ACTIVE(SSE4_1);
  return usable ? compress_sha_ni : nullptr;
}

}  // namespace aasm::sha256_blocks

#else

namespace aasm::sha256_blocks {
CompressFn hardware() { return nullptr; }
}  // namespace aasm::sha256_blocks

#endif

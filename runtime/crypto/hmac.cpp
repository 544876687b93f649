#include "crypto/hmac.h"

#include <array>

namespace aasm {

Sha256Digest hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> message) {
  constexpr size_t kBlock = 64;
  // A key longer than a block is hashed first; a shorter one is zero-padded.
  std::array<uint8_t, kBlock> block{};
  if (key.size() > kBlock) {
    const Sha256Digest hashed = sha256(key);
    std::copy(hashed.begin(), hashed.end(), block.begin());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::array<uint8_t, kBlock> inner_pad, outer_pad;
  for (size_t i = 0; i < kBlock; ++i) {
    inner_pad[i] = block[i] ^ 0x36;
    outer_pad[i] = block[i] ^ 0x5c;
  }
  Sha256 inner;
  inner.update(inner_pad);
  inner.update(message);
  const Sha256Digest inner_digest = inner.finish();
  Sha256 outer;
  outer.update(outer_pad);
  outer.update(inner_digest);
  return outer.finish();
}

}  // namespace aasm

// HMAC-SHA-256 (RFC 2104, FIPS 198-1) on the one SHA-256 (sha256.h): the
// receipts' keyed digests (docs/receipts.md#redaction).
#pragma once

#include <cstdint>
#include <span>

#include "crypto/sha256.h"

namespace aasm {

Sha256Digest hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> message);

}  // namespace aasm

// SHA-256 against the FIPS 180-4 / NIST example vectors, and the SHA-NI
// block function against the portable one.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <algorithm>
#include <iterator>
#include <vector>

#include "crypto/sha256.h"
#include "crypto/sha256_blocks.h"

namespace {

std::span<const uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string hex_sha256(std::string_view s) { return aasm::to_hex(aasm::sha256(bytes_of(s))); }

}  // namespace

TEST_CASE("sha256: known vectors") {
  CHECK(hex_sha256("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex_sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex_sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(hex_sha256(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: incremental updates match one shot at every split around block edges") {
  // 55/56/64 bytes are where the padding spills into a second block.
  const std::string input(200, 'q');
  for (size_t length : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 119u, 120u, 128u, 200u}) {
    const std::string_view text(input.data(), length);
    const std::string expected = hex_sha256(text);
    for (size_t split = 0; split <= length; split += 7) {
      aasm::Sha256 hasher;
      hasher.update(bytes_of(text.substr(0, split)));
      hasher.update(bytes_of(text.substr(split)));
      const aasm::Sha256Digest digest = hasher.finish();
      CHECK_MESSAGE(aasm::to_hex(digest) == expected, "length ", length, " split ", split);
    }
  }
}

TEST_CASE("sha256: the SHA-NI block function agrees with the portable one") {
  const aasm::sha256_blocks::CompressFn hardware = aasm::sha256_blocks::hardware();
  if (!hardware) {
    MESSAGE("this CPU has no SHA extensions: only the portable block function runs here");
    return;
  }
  // A deterministic byte stream, hashed in runs of 1 to 9 blocks from varying states.
  std::vector<uint8_t> input(64 * 9);
  uint32_t x = 0x9e3779b9;
  for (uint8_t& b : input) b = uint8_t((x = x * 1664525 + 1013904223) >> 24);
  for (size_t blocks = 1; blocks <= 9; ++blocks) {
    uint32_t portable[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    uint32_t accelerated[8];
    std::copy(std::begin(portable), std::end(portable), accelerated);
    for (int round = 0; round < 3; ++round) {
      aasm::sha256_blocks::compress_portable(portable, input.data(), blocks);
      hardware(accelerated, input.data(), blocks);
      CHECK(std::equal(std::begin(portable), std::end(portable), accelerated));
    }
  }
}

// Helpers to build plans, valid and deliberately broken, for the unit tests
// and the kernel tests. The broken ones are assembled byte by byte so that
// each breaks exactly one rule of docs/plan-format.md.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "plan/plan.h"

namespace aasm::test {

// A plan that uses every section type and field.
plan::Plan sample_plan();

// Replaces the SHA-256 trailer with the digest of the bytes before it, so a
// test can break one rule without also tripping the digest check.
std::vector<uint8_t> reseal(std::vector<uint8_t> bytes);

// Header field offsets (format.h: magic[8], version u16, header size u16,
// section count u32, file size u64, flags u32, reserved u32).
inline constexpr size_t kVersionOffset = 8;
inline constexpr size_t kCountOffset = 12;
inline constexpr size_t kFileSizeOffset = 16;

void put_u16(std::vector<uint8_t>& bytes, size_t at, uint16_t v);
void put_u32(std::vector<uint8_t>& bytes, size_t at, uint32_t v);

struct RawSection {
  uint32_t type = 0;
  uint32_t flags = 0;
  std::vector<uint8_t> body;
  std::optional<uint64_t> offset;  // default: next 8-byte boundary
  std::optional<uint64_t> length;  // default: body size
};

// Header, section table, bodies (padding with `pad_byte`), digest. The
// table has one entry per section; the header's section count is `count`
// when given (a lie, to break the table), else the number of sections.
std::vector<uint8_t> assemble(const std::vector<RawSection>& sections, std::optional<uint32_t> count = {},
                              uint8_t pad_byte = 0);

// A minimal, valid meta section body: one key/value pair.
std::vector<uint8_t> meta_body();

}  // namespace aasm::test

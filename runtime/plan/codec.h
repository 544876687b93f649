// Little-endian, fixed-width encoding helpers for the plan file.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aasm::plan {

// A little-endian unsigned integer of `width` bytes (1 to 8) at `p`.
inline uint64_t load_le(const uint8_t* p, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

class ByteWriter {
 public:
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void raw(std::span<const uint8_t> v) { bytes_.insert(bytes_.end(), v.begin(), v.end()); }
  // u16 length, then the bytes (no terminator).
  void str16(std::string_view s) {
    u16(uint16_t(s.size()));
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  void pad_to(size_t alignment) {
    while (bytes_.size() % alignment) bytes_.push_back(0);
  }
  void patch_u64(size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_[at + i] = uint8_t(v >> (8 * i));
  }
  size_t size() const { return bytes_.size(); }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  void put(uint64_t v, int width) {
    for (int i = 0; i < width; ++i) bytes_.push_back(uint8_t(v >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
};

// A cursor that never reads past its end: every read reports failure
// instead, and the first failure sticks.
class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  bool ok() const { return ok_; }
  size_t remaining() const { return ok_ ? bytes_.size() - at_ : 0; }
  bool at_end() const { return ok_ && at_ == bytes_.size(); }

  uint8_t u8() { return uint8_t(get(1)); }
  uint16_t u16() { return uint16_t(get(2)); }
  uint32_t u32() { return uint32_t(get(4)); }
  uint64_t u64() { return get(8); }
  std::string str16() { return std::string(view16()); }
  // The same, without a copy: valid as long as the underlying bytes.
  std::string_view view16() {
    size_t n = u16();
    if (!take(n)) return {};
    return {reinterpret_cast<const char*>(bytes_.data() + at_ - n), n};
  }
  // `n` raw bytes, or an empty span (and failure) when fewer remain.
  std::span<const uint8_t> bytes(size_t n) {
    if (!take(n)) return {};
    return bytes_.subspan(at_ - n, n);
  }

 private:
  bool take(size_t n) {
    if (!ok_ || bytes_.size() - at_ < n) {
      ok_ = false;
      return false;
    }
    at_ += n;
    return true;
  }
  uint64_t get(int width) {
    if (!take(size_t(width))) return 0;
    return load_le(bytes_.data() + at_ - width, width);
  }
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace aasm::plan

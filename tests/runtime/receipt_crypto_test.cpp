// The receipt's keyed digest and canonical text (docs/receipts.md):
// HMAC-SHA-256 against RFC 4231's vectors, and the canonical JSON writer
// against the bytes RFC 8785 (and Python's sorted, compact json.dumps) give.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "crypto/hmac.h"
#include "base/canonical_json.h"

using namespace aasm;

namespace {

std::string hmac_hex(const std::string& key, const std::string& message) {
  return to_hex(hmac_sha256({reinterpret_cast<const uint8_t*>(key.data()), key.size()},
                            {reinterpret_cast<const uint8_t*>(message.data()), message.size()}));
}

}  // namespace

TEST_CASE("hmac_sha256: RFC 4231 test cases 1, 2 and 6 (a key longer than a block)") {
  CHECK(hmac_hex(std::string(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(hmac_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(hmac_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First") ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("canonical JSON: sorted members, no whitespace, only the required escapes") {
  const json::Value value = json::Object{{"b", json::Array{1, -2, true, json::Value()}},
                                         {"a", std::string("q\"\\/\x01\x7f\n\xc3\xa9")}};
  CHECK(json::canonical(value) == "{\"a\":\"q\\\"\\\\/\\u0001\x7f\\n\xc3\xa9\",\"b\":[1,-2,true,null]}");
  // Bytes that are not UTF-8 (a lone continuation byte, an overlong '/', a
  // surrogate) become U+FFFD each, so the text is always valid UTF-8.
  CHECK(json::canonical_string("a\x80z") == "\"a\xef\xbf\xbdz\"");
  CHECK(json::canonical_string("\xc0\xaf") == "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  CHECK(json::canonical_string("\xed\xa0\x80") == "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  CHECK(json::canonical_string("\xf0\x9f\x98\x80") == "\"\xf0\x9f\x98\x80\"");  // U+1F600 stays
}

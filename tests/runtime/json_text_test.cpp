// The runtime's one JSON writer (receipts, --dry-run --json, doctor --json):
// quoting, commas, nesting, key order as written.
#include <doctest/doctest.h>

#include "base/json_text.h"

using namespace aasm;

TEST_CASE("json text: quoting escapes quotes, backslashes and control bytes, nothing else") {
  CHECK(json::quoted("plain") == "\"plain\"");
  CHECK(json::quoted("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(json::quoted(std::string("\n\t\x01", 3)) == "\"\\u000a\\u0009\\u0001\"");
  CHECK(json::quoted("caf\xc3\xa9") == "\"caf\xc3\xa9\"");  // UTF-8 passes through
}

TEST_CASE("json text: the writer separates items, nests, and keeps keys in the order written") {
  json::Writer w;
  w.begin_object().key("z").value(1).key("a").begin_array().value("x").value(true).value(uint64_t(7)).end_array();
  w.key("empty").begin_object().end_object().key("list").strings({"p", "q"}).key("n").value(int64_t(-2)).end_object();
  CHECK(w.text() == "{\"z\":1,\"a\":[\"x\",true,7],\"empty\":{},\"list\":[\"p\",\"q\"],\"n\":-2}\n");
}

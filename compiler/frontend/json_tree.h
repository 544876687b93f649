// Strict JSON (RFC 8259) read into the YAML tree's nodes, for `aasmc import`
// (docs/import.md says why not yaml-cpp or nlohmann): every node keeps its
// SMLoc, so each fault of the input is one `file:line:col` diagnostic.
// Refused, each at its byte: what RFC 8259 does not allow (comments, trailing
// commas, single quotes, bare words, leading zeros, control characters and
// lone surrogates in strings), a duplicate key (a note at the first), a NUL
// escape, nesting deeper than kMaxNestingDepth, and what check_policy_text
// refuses (over 1 MiB, a NUL byte, not UTF-8).
//
// Objects are kMap (keys quoted scalars), arrays kSequence, strings quoted
// scalars, numbers, `true` and `false` unquoted scalars holding their text,
// `null` kNull.
#pragma once

#include <optional>

#include "frontend/yaml_tree.h"
#include "support/diagnostics.h"

namespace aasmc {

// The one JSON value of buffer `buffer`; nullopt with the error in `diags`.
std::optional<YamlNode> load_json_document(unsigned buffer, Diagnostics& diags);

// What an unquoted scalar of load_json_document holds.
bool is_json_string(const YamlNode& node);
bool is_json_bool(const YamlNode& node);
bool is_json_number(const YamlNode& node);

}  // namespace aasmc

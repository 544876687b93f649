// The command-line rule both tools share: an option that takes a value
// takes the next argument, except "--", which ends the options (and would
// otherwise turn `--receipt -- true` into a receipt named "--").
#pragma once

#include <string_view>

namespace aasm {

constexpr bool is_option_value(std::string_view next) { return next != "--"; }

}  // namespace aasm

// A value or one error: the runtime's (libc-only) stand-in for
// llvm::Expected. Errors are printed once, at the top, by the tool.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace aasm {

struct Error {
  std::string message;
  // The errno behind it, where the caller's next step depends on the
  // kernel's answer (the launcher's exit status 126 or 127 for a command it
  // cannot execute or cannot find); 0 when none does.
  int code = 0;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  explicit operator bool() const { return std::holds_alternative<T>(state_); }
  T& operator*() { return std::get<T>(state_); }
  const T& operator*() const { return std::get<T>(state_); }
  T* operator->() { return &std::get<T>(state_); }
  const T* operator->() const { return &std::get<T>(state_); }
  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Result<void>: success or one error.
struct Ok {};
using Status = Result<Ok>;

inline Error make_error(std::string message, int code = 0) { return Error{std::move(message), code}; }

}  // namespace aasm

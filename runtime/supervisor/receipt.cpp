#include "supervisor/receipt.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace aasm {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      out += escape;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string field(const char* key, const std::string& value) { return quoted(key) + ": " + quoted(value); }

}  // namespace

std::string render_receipt(const Receipt& r) {
  std::string out = "{\n";
  out += "  " + field("schema", "aasm.dev/receipt/v1") + ",\n";
  out += "  " + field("plan_sha256", r.plan_sha256) + ",\n";
  out += "  \"host\": {" + field("kernel_release", r.kernel_release) + ", " + field("architecture", r.architecture) +
         ", \"landlock_abi\": " + std::to_string(r.landlock_abi) + "},\n";
  out += "  \"controls\": [";
  for (size_t i = 0; i < r.controls.size(); ++i) {
    const ReceiptControl& c = r.controls[i];
    out += std::string(i ? "," : "") + "\n    {" + field("domain", c.domain) + ", " + field("requested", c.requested) +
           ", " + field("planned", c.planned) + ", " + field("achieved", c.achieved) + ", " + field("basis", c.basis) +
           "}";
  }
  out += "\n  ],\n  \"paths\": [";
  for (size_t i = 0; i < r.paths.size(); ++i) {
    const ReceiptPath& p = r.paths[i];
    out += std::string(i ? "," : "") + "\n    {" + field("template", p.rule_template) + ", " +
           field("resolved_sha256", p.resolved_sha256) + ", " + field("status", p.status) + "}";
  }
  out += "\n  ],\n";
  if (!r.view.empty()) {
    out += "  \"view\": [";
    for (size_t i = 0; i < r.view.size(); ++i) {
      const ReceiptViewMount& m = r.view[i];
      out += std::string(i ? "," : "") + "\n    {" + field("path", m.path) + ", " + field("what", m.what) + ", " +
             field("options", m.options) + ", " + field("status", m.status) + "}";
    }
    out += "\n  ],\n";
  }
  out += "  \"command\": {" + field("outcome", r.outcome) +
         ", \"exit_code\": " + std::to_string(r.exit_code) + "},\n  \"events\": [";
  for (size_t i = 0; i < r.events.size(); ++i) out += std::string(i ? ", " : "") + quoted(r.events[i]);
  out += "],\n  " + field("cleanup", r.cleanup) + "\n}\n";
  return out;
}

namespace {

// A character device (`--receipt /dev/null`) takes the text where it is:
// rename(2) would replace the host's node with a file. Opened without
// blocking and without becoming a controlling terminal.
Status write_in_place(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return make_error("cannot write the receipt '" + path + "': " + std::strerror(errno));
  const bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  const int saved = errno;
  ::close(fd);
  if (!ok) return make_error("cannot write the receipt '" + path + "': " + std::strerror(saved));
  return Ok{};
}

}  // namespace

Status write_receipt(const std::string& path, const Receipt& receipt) {
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0) {
    if (S_ISCHR(existing.st_mode)) return write_in_place(path, render_receipt(receipt));
    if (S_ISBLK(existing.st_mode))
      return make_error("cannot write the receipt '" + path + "': it is a block device, which a receipt would replace");
  }
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return make_error("cannot write the receipt '" + path + "': " + std::strerror(errno));
  const std::string text = render_receipt(receipt);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += size_t(n);
  }
  const bool ok = written == text.size() && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    return make_error("cannot write the receipt '" + path + "': " + std::strerror(saved));
  }
  return Ok{};
}

}  // namespace aasm

#include "supervisor/receipt.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/json_text.h"

namespace aasm {
namespace {

std::string quoted(const std::string& text) { return json::quoted(text); }

std::string field(const char* key, const std::string& value) { return quoted(key) + ": " + quoted(value); }
std::string number(const char* key, uint64_t value) { return quoted(key) + ": " + std::to_string(value); }

std::string strings(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += std::string(i ? ", " : "") + quoted(items[i]);
  return out + "]";
}

std::string policy_line(const denials::PolicyLine& l) {
  return "{" + field("document", l.document) + ", " + field("file", l.file) + ", " + number("line", l.line) + ", " +
         number("col", l.column) + ", " + field("key", l.key) + ", " + field("item", l.item) + ", " +
         field("value", l.value) + "}";
}

std::string edit(const denials::Edit& e) {
  return "{" + field("document", e.document) + ", " + field("file", e.file) + ", " + field("list", e.list) + ", " +
         field("op", e.op) + ", " + field("item", e.item) + ", " + number("line", e.line) + ", " +
         number("col", e.column) + ", " + field("widens", e.widens) + "}";
}

std::string errno_name(int error) {
  const char* name = error ? strerrorname_np(error) : nullptr;
  return name ? name : "";
}

std::string denial(const ReceiptDenial& r) {
  const denials::Denial& d = r.denial;
  const denials::Explanation& e = r.explanation;
  // The tracer and the listener record the call a Landlock denial came
  // through (openat, connect), but the section's contract
  // (docs/receipts.md#denials) is "" and 0 outside seccomp: the join names
  // only seccomp calls, so the number alone leaked through and an entry
  // named no call yet gave one's number. The right, path or port is the
  // Landlock key.
  const uint64_t number_of_call = d.layer == denials::Layer::kSeccomp && d.syscall > 0 ? uint64_t(d.syscall) : 0;
  std::string out = "\n      {" + field("layer", denials::layer_name(d.layer)) + ", " +
                    field("witness", denials::witness_name(d.witness)) + ", " + field("syscall", e.call) + ", " +
                    number("syscall_number", number_of_call) + ", " +
                    field("errno", errno_name(d.error)) + ",\n       \"rights\": " + strings(e.rights) + ", " +
                    field("path", e.path) + ", " + number("port", d.port) + ", " + field("arguments", d.arguments) +
                    ", " + number("count", r.count) + ",\n       \"policy\": [";
  for (size_t i = 0; i < e.policy.size(); ++i) out += std::string(i ? ", " : "") + policy_line(e.policy[i]);
  out += "],\n       \"edits\": [";
  for (size_t i = 0; i < e.edits.size(); ++i) out += std::string(i ? ", " : "") + edit(e.edits[i]);
  return out + "],\n       " + field("note", e.note) + "}";
}

std::string denials_section(const ReceiptDenials& d) {
  std::string out = "  \"denials\": {\"provenance\": " + std::string(d.provenance ? "true" : "false") + ", " +
                    number("dropped", d.dropped) + ", \"unseen\": " + strings(d.unseen) + ",\n    \"entries\": [";
  for (size_t i = 0; i < d.entries.size(); ++i) out += std::string(i ? "," : "") + denial(d.entries[i]);
  return out + (d.entries.empty() ? "]},\n" : "\n    ]},\n");
}

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
         ", \"exit_code\": " + std::to_string(r.exit_code) + "},\n  \"events\": " + strings(r.events);
  out += ",\n" + denials_section(r.denials) + "  " + field("cleanup", r.cleanup) + "\n}\n";
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

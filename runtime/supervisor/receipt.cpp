#include "supervisor/receipt.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "crypto/sha256.h"

namespace aasm {
namespace {

using json::Array;
using json::Object;
using json::Value;

Value policy_line(const denials::PolicyLine& l) {
  return Object{{"document", l.document}, {"file", l.file},   {"line", uint64_t(l.line)}, {"col", uint64_t(l.column)},
                {"key", l.key},           {"item", l.item},   {"value", l.value}};
}

Value edit(const denials::Edit& e) {
  return Object{{"document", e.document}, {"file", e.file}, {"list", e.list},
                {"op", e.op},             {"item", e.item}, {"line", uint64_t(e.line)},
                {"col", uint64_t(e.column)}, {"widens", e.widens}};
}

std::string errno_name(int error) {
  const char* name = error ? strerrorname_np(error) : nullptr;
  return name ? name : "";
}

Value denial(const ReceiptDenial& r) {
  const denials::Denial& d = r.denial;
  const denials::Explanation& e = r.explanation;
  // The tracer and the listener record the call a Landlock denial came
  // through (openat, connect), but the section's contract
  // (docs/receipts.md#denials) is "" and 0 outside seccomp: the join names
  // only seccomp calls, so the number alone leaked through and an entry
  // named no call yet gave one's number. The right, path or port is the
  // Landlock key.
  const uint64_t number_of_call = d.layer == denials::Layer::kSeccomp && d.syscall > 0 ? uint64_t(d.syscall) : 0;
  Array policy, edits;
  for (const denials::PolicyLine& line : e.policy) policy.push_back(policy_line(line));
  for (const denials::Edit& one : e.edits) edits.push_back(edit(one));
  return Object{{"layer", denials::layer_name(d.layer)},
                {"witness", denials::witness_name(d.witness)},
                {"syscall", e.call},
                {"syscall_number", number_of_call},
                {"errno", errno_name(d.error)},
                {"rights", json::strings(e.rights)},
                {"path", e.path},
                {"port", uint64_t(d.port)},
                {"arguments", d.arguments},
                {"count", r.count},
                {"policy", std::move(policy)},
                {"edits", std::move(edits)},
                {"note", e.note},
                {"by_design", e.by_design}};
}

Value denials_section(const ReceiptDenials& d) {
  Array entries;
  for (const ReceiptDenial& entry : d.entries) entries.push_back(denial(entry));
  return Object{{"provenance", d.provenance},
                {"dropped", d.dropped},
                {"unseen", json::strings(d.unseen)},
                {"entries", std::move(entries)}};
}

Value body_of(const Receipt& r) {
  Array controls, paths, view, pinned;
  for (const ReceiptControl& c : r.controls)
    controls.push_back(Object{{"domain", c.domain}, {"requested", c.requested}, {"planned", c.planned},
                              {"achieved", c.achieved}, {"basis", c.basis}});
  for (const ReceiptPath& p : r.paths)
    paths.push_back(Object{{"template", p.rule_template}, {"resolved_hmac", p.resolved_hmac}, {"status", p.status}});
  for (const ReceiptViewMount& m : r.view)
    view.push_back(Object{{"path", m.path}, {"what", m.what}, {"options", m.options}, {"status", m.status}});
  for (const ReceiptPin& p : r.pinned)
    pinned.push_back(Object{{"path", p.path}, {"sha256", p.sha256}, {"size", p.size}, {"checked", p.checked}});
  const ReceiptRedaction& x = r.redaction;
  Object body{
      {"schema", kReceiptSchema},
      {"plan_sha256", r.plan_sha256},
      {"host", Object{{"kernel_release", r.kernel_release}, {"architecture", r.architecture},
                      {"landlock_abi", r.landlock_abi}}},
      {"controls", std::move(controls)},
      {"enforcement", r.enforcement},
      {"paths", std::move(paths)},
      {"command", Object{{"outcome", r.outcome},
                         {"signal", r.signal},
                         {"exit_code", r.exit_code},
                         {"arguments", uint64_t(x.argument_hmacs.size())},
                         {"argument_hmacs", json::strings(x.argument_hmacs)},
                         {"environment", Object{{"constrained", x.environment},
                                                {"variables", x.environment_variables},
                                                {"hmac", x.environment_hmac}}}}},
      {"cwd_hmac", x.cwd_hmac},
      {"redaction", Object{{"digest", "HMAC-SHA-256"}, {"key", x.key_source}, {"key_id", x.key_id}}},
      {"withheld", Array(std::begin(kWithheldFields), std::end(kWithheldFields))},
      {"timeline", Object{{"start", r.timeline.start}, {"exec", r.timeline.exec}, {"exit", r.timeline.exit},
                          {"cleanup", r.timeline.cleanup}}},
      {"events", json::strings(r.events)},
      {"denials", denials_section(r.denials)},
      {"cleanup", r.cleanup}};
  if (!r.view.empty()) body.emplace("view", std::move(view));
  if (!r.pinned.empty()) body.emplace("pinned", std::move(pinned));
  if (!r.backend.empty()) body.emplace("backend", r.backend);
  if (!r.backends.empty()) {
    Array backends;
    for (const ReceiptBackend& b : r.backends)
      backends.push_back(Object{{"backend", b.backend}, {"taken", b.taken}, {"why", b.why}});
    body.emplace("backends", std::move(backends));
  }
  return body;
}

}  // namespace

std::string receipt_seal(const Value& body) {
  const std::string text = json::canonical(body);
  return to_hex(sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()}));
}

std::string render_receipt(const Receipt& r) {
  Value body = body_of(r);
  const std::string seal = receipt_seal(body);
  std::get<Object>(body.v).emplace("seal", Object{{"algorithm", kSealAlgorithm}, {"sha256", seal}});
  return json::canonical(body) + "\n";
}

namespace {

Error cannot_write(const std::string& name, int error) {
  return make_error("cannot write the receipt " + name + ": " + std::strerror(error));
}

bool write_all(int fd, const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += size_t(n);
  }
  return true;
}

}  // namespace

Result<ReceiptOutput> ReceiptOutput::open_path(const std::string& path) {
  ReceiptOutput out;
  out.name_ = "'" + path + "'";
  out.path_ = path;
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0) {
    if (S_ISCHR(existing.st_mode)) {
      // Opened without blocking and without becoming a controlling terminal.
      out.fd_ = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      if (out.fd_ < 0) return cannot_write(out.name_, errno);
      return out;
    }
    if (S_ISBLK(existing.st_mode))
      return make_error("cannot write the receipt " + out.name_ + ": it is a block device, which a receipt would replace");
    if (S_ISDIR(existing.st_mode)) return cannot_write(out.name_, EISDIR);
  }
  const size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  out.fd_ = ::open(directory.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (out.fd_ >= 0) {
    out.unnamed_ = true;
    return out;
  }
  if (errno != EOPNOTSUPP && errno != EISDIR) return cannot_write(out.name_, errno);
  out.temp_ = path + ".tmp.XXXXXX";
  out.fd_ = ::mkostemp(out.temp_.data(), O_CLOEXEC);  // O_CREAT|O_EXCL, mode 0600
  if (out.fd_ < 0) {
    out.temp_.clear();
    return cannot_write(out.name_, errno);
  }
  return out;
}

namespace {

// Names the unnamed file `fd` beside `path`: a fresh random name, linked
// through /proc/self/fd (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH).
Result<std::string> link_unnamed(int fd, const std::string& path) {
  const std::string source = "/proc/self/fd/" + std::to_string(fd);
  for (int attempt = 0; attempt < 16; ++attempt) {
    uint64_t nonce = 0;
    if (::getrandom(&nonce, sizeof nonce, 0) != ssize_t(sizeof nonce)) return make_error(std::strerror(errno));
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, ".tmp.%016llx", static_cast<unsigned long long>(nonce));
    const std::string name = path + suffix;
    if (::linkat(AT_FDCWD, source.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return name;
    if (errno != EEXIST) return make_error(std::strerror(errno));
  }
  return make_error(std::strerror(EEXIST));
}

// The named temporary file is still the one opened: a command that could
// write in its directory may have renamed another file over the name.
bool still_ours(int fd, const std::string& name) {
  struct stat opened {}, named {};
  return ::fstat(fd, &opened) == 0 && ::lstat(name.c_str(), &named) == 0 && opened.st_dev == named.st_dev &&
         opened.st_ino == named.st_ino;
}

}  // namespace

Result<ReceiptOutput> ReceiptOutput::open_descriptor(int fd) {
  ReceiptOutput out;
  out.name_ = "descriptor " + std::to_string(fd);
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return cannot_write(out.name_, errno);
  if ((flags & O_ACCMODE) == O_RDONLY) return cannot_write(out.name_, EBADF);
  if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return cannot_write(out.name_, errno);
  out.fd_ = fd;
  out.close_ = false;
  return out;
}

ReceiptOutput::ReceiptOutput(ReceiptOutput&& other) noexcept
    : name_(std::move(other.name_)), path_(std::move(other.path_)), temp_(std::move(other.temp_)), fd_(other.fd_),
      unnamed_(other.unnamed_), close_(other.close_) {
  other.fd_ = -1;
  other.temp_.clear();
}

ReceiptOutput::~ReceiptOutput() {
  if (fd_ >= 0 && close_) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

Status ReceiptOutput::commit(const std::string& text) {
  // From the start of the file and no further, whatever was written to it meanwhile.
  if ((unnamed_ || !temp_.empty()) && (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0))
    return cannot_write(name_, errno);
  if (!write_all(fd_, text)) return cannot_write(name_, errno);
  if (!unnamed_ && temp_.empty()) return Ok{};  // a device, a caller's descriptor
  if (::fsync(fd_) != 0) return cannot_write(name_, errno);
  if (unnamed_) {
    Result<std::string> named = link_unnamed(fd_, path_);
    if (!named) return make_error("cannot write the receipt " + name_ + ": " + named.error().message);
    temp_ = *named;
  } else if (!still_ours(fd_, temp_)) {
    temp_.clear();  // not ours to remove
    return make_error("cannot write the receipt " + name_ + ": its temporary file was replaced while the command ran");
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) return cannot_write(name_, errno);
  temp_.clear();  // renamed: nothing to remove
  return Ok{};
}

}  // namespace aasm

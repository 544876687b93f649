#include "frontend/yaml_tree.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/ConvertUTF.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <optional>
#include <sstream>

namespace aasmc {
namespace {

// yaml-cpp reads the buffer's bytes as they are (check_policy_text admits UTF-8
// only), so a mark's pos is a byte offset, counted after a byte order mark.
// (Line and column would need a scan of the line for every node, quadratic
// on a long flow line, and SourceMgr refuses a column past a lone '\r'.)
llvm::SMLoc loc_of(llvm::SourceMgr& sources, unsigned buffer, const YAML::Mark& mark) {
  const llvm::StringRef text = sources.getMemoryBuffer(buffer)->getBuffer();
  const size_t bom = text.startswith("\xEF\xBB\xBF") ? 3 : 0;
  const size_t offset = mark.pos < 0 ? 0 : std::min(bom + size_t(mark.pos), text.size());
  return llvm::SMLoc::getFromPointer(text.data() + offset);
}

// yaml-cpp reports a tab in the indentation as a broken structure ("end of
// map not found") on the tab's line, which does not say what to change.
bool tab_in_indentation(llvm::StringRef text, llvm::SMLoc loc) {
  const char* at = loc.getPointer();
  while (at > text.begin() && at[-1] != '\n') --at;
  for (; at < text.end() && (*at == ' ' || *at == '\t'); ++at)
    if (*at == '\t') return true;
  return false;
}

// "?" is yaml-cpp's tag for a plain node, "!" for a quoted scalar; anything
// else was written explicitly (`!!str`, `!custom`).
bool is_explicit_tag(const std::string& tag) { return !tag.empty() && tag != "?" && tag != "!"; }

class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(unsigned buffer, Diagnostics& diags) : buffer_(buffer), diags_(diags) {}

  std::vector<YamlDocument> take() { return std::move(documents_); }
  bool reported_too_deep() const { return reported_too_deep_; }

  // yaml-cpp 0.7 cannot start a node with some tokens (a ',' outside a flow
  // collection): it reports a null document without consuming the token,
  // and returns the same document again on every call, forever. A document
  // that starts where the one before it started is that loop.
  std::optional<YAML::Mark> stalled_at() const {
    if (!stalled_) return std::nullopt;
    return last_start_;
  }
  void drop_documents_from(const YAML::Mark& mark) {
    // Those documents are nothing but a null root at the stuck token.
    while (!documents_.empty() && documents_.back().root.kind == YamlNode::Kind::kNull &&
           documents_.back().root.loc == at(mark))
      documents_.pop_back();
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    stalled_ = started_ && mark.pos == last_start_.pos;
    started_ = true;
    last_start_ = mark;
    current_ = YamlDocument{buffer_, at(mark), {}};
    failed_ = false;
    stack_.clear();
    have_root_ = false;
  }
  void OnDocumentEnd() override {
    if (!failed_ && have_root_ && !stalled_) documents_.push_back(std::move(current_));
  }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    check_anchor(mark, anchor);
    YamlNode node;
    node.loc = at(mark);
    add(std::move(node));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    fail(mark, "YAML aliases (*name) are not allowed in a policy: write the value out");
    add(YamlNode{});
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    check_anchor(mark, anchor);
    check_tag(mark, tag);
    YamlNode node;
    node.kind = YamlNode::Kind::kScalar;
    node.loc = at(mark);
    node.scalar = value;
    node.quoted = tag == "!";
    if (!node.quoted && value == "<<" && expecting_key())
      fail(mark, "YAML merge keys (<<) are not allowed in a policy: write the keys out");
    add(std::move(node));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, tag, anchor, YamlNode::Kind::kSequence);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, tag, anchor, YamlNode::Kind::kMap);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    YamlNode node;
    bool have_key = false;
    YamlNode key;
    llvm::StringMap<size_t> first_entry;  // scalar key -> its first entry, so duplicates are found in O(1)
  };

  llvm::SMLoc at(const YAML::Mark& mark) { return loc_of(diags_.sources(), buffer_, mark); }

  void fail(const YAML::Mark& mark, const std::string& message, const char* id = diag::kYamlFeature) {
    diags_.error(at(mark), message, id);
    failed_ = true;
  }
  void check_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) fail(mark, "YAML anchors (&name) are not allowed in a policy");
  }
  void check_tag(const YAML::Mark& mark, const std::string& tag) {
    if (is_explicit_tag(tag)) fail(mark, "YAML tags ('" + tag + "') are not allowed in a policy");
  }
  bool expecting_key() const {
    return !stack_.empty() && stack_.back().node.kind == YamlNode::Kind::kMap && !stack_.back().have_key;
  }
  void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, YamlNode::Kind kind) {
    check_anchor(mark, anchor);
    check_tag(mark, tag);
    if (stack_.size() == kMaxNestingDepth) {  // reported once, where it first happens
      fail(mark, "nesting deeper than " + std::to_string(kMaxNestingDepth) + " levels", diag::kTooLarge);
      reported_too_deep_ = true;
    }
    Frame frame;
    frame.node.kind = kind;
    frame.node.loc = at(mark);
    stack_.push_back(std::move(frame));
  }
  void close() {
    YamlNode node = std::move(stack_.back().node);
    stack_.pop_back();
    add(std::move(node));
  }
  void add(YamlNode node) {
    if (stack_.empty()) {
      current_.root = std::move(node);
      have_root_ = true;
      return;
    }
    Frame& top = stack_.back();
    if (top.node.kind == YamlNode::Kind::kSequence) {
      top.node.items.push_back(std::move(node));
    } else if (!top.have_key) {
      top.key = std::move(node);
      top.have_key = true;
    } else {
      check_duplicate(top);
      top.node.entries.push_back({std::move(top.key), std::move(node)});
      top.have_key = false;
    }
  }
  void check_duplicate(Frame& frame) {
    if (frame.key.kind != YamlNode::Kind::kScalar) return;  // non-scalar keys fail later as wrong types
    const auto [it, inserted] = frame.first_entry.try_emplace(frame.key.scalar, frame.node.entries.size());
    if (inserted) return;
    const YamlNode& first = frame.node.entries[it->second].key;
    diags_.error(frame.key.loc, "duplicate key '" + first.scalar + "'", diag::kDuplicateKey, frame.key.range());
    diags_.note(first.loc, "first set here");
    failed_ = true;
  }

  unsigned buffer_;
  Diagnostics& diags_;
  std::vector<YamlDocument> documents_;
  YamlDocument current_;
  std::vector<Frame> stack_;
  bool have_root_ = false;
  bool failed_ = false;
  bool reported_too_deep_ = false;
  bool started_ = false;
  bool stalled_ = false;
  YAML::Mark last_start_;
};

}  // namespace

bool check_policy_text(unsigned buffer, Diagnostics& diags, const char* what) {
  llvm::StringRef text = diags.sources().getMemoryBuffer(buffer)->getBuffer();
  if (text.size() > kMaxPolicyFileBytes) {
    diags.error(llvm::SMLoc::getFromPointer(text.begin()),
                std::string(what) + " is " + std::to_string(text.size()) + " bytes, over the " +
                    std::to_string(kMaxPolicyFileBytes) + "-byte limit",
                diag::kTooLarge);
    return false;
  }
  if (size_t nul = text.find('\0'); nul != llvm::StringRef::npos) {
    diags.error(llvm::SMLoc::getFromPointer(text.begin() + nul), "NUL byte in " + std::string(what), diag::kEncoding);
    return false;
  }
  const auto* begin = reinterpret_cast<const llvm::UTF8*>(text.begin());
  const llvm::UTF8* bad = begin;
  if (!llvm::isLegalUTF8String(&bad, reinterpret_cast<const llvm::UTF8*>(text.end()))) {
    diags.error(llvm::SMLoc::getFromPointer(reinterpret_cast<const char*>(bad)),
                std::string(what) + " is not valid UTF-8", diag::kEncoding);
    return false;
  }
  return true;
}

llvm::SMRange YamlNode::range() const {
  if (kind != Kind::kScalar || !loc.isValid()) return {};
  // Buffers are NUL-terminated, so the scan stops at the end of the line or file.
  const char* end = loc.getPointer();
  const char* const limit = end + scalar.size() + (quoted ? 2 : 0);
  while (end < limit && *end != '\n' && *end != '\0') ++end;
  return {loc, llvm::SMLoc::getFromPointer(end)};
}

const char* YamlNode::kind_name() const {
  switch (kind) {
    case Kind::kNull: return "null";
    case Kind::kScalar: return "a scalar";
    case Kind::kSequence: return "a list";
    case Kind::kMap: return "a mapping";
  }
  return "?";
}

std::vector<YamlDocument> load_yaml_documents(unsigned buffer, Diagnostics& diags) {
  if (!check_policy_text(buffer, diags, "policy file")) return {};
  llvm::StringRef text = diags.sources().getMemoryBuffer(buffer)->getBuffer();
  std::istringstream stream{std::string(text)};
  TreeBuilder builder(buffer, diags);
  try {
    YAML::Parser parser(stream);
    while (parser.HandleNextDocument(builder)) {
      if (auto mark = builder.stalled_at()) {
        builder.drop_documents_from(*mark);
        const char c = size_t(mark->pos) < text.size() ? text[size_t(mark->pos)] : '\0';
        const std::string what = c > ' ' && c < 0x7f ? "'" + std::string(1, c) + "'" : "token";
        diags.error(loc_of(diags.sources(), buffer, *mark), "YAML syntax error: unexpected " + what,
                    diag::kYamlSyntax);
        break;
      }
    }
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own recursion guard (0.7.0 and later) stops a deep input far
    // below any stack limit. The builder has reported the nesting at level 33
    // before yaml-cpp gets there; its "bad file" text would only confuse.
    if (!builder.reported_too_deep())
      diags.error(loc_of(diags.sources(), buffer, e.mark),
                  "nesting deeper than " + std::to_string(kMaxNestingDepth) + " levels", diag::kTooLarge);
  } catch (const YAML::Exception& e) {
    const llvm::SMLoc loc = loc_of(diags.sources(), buffer, e.mark);
    std::string message = "YAML syntax error: " + e.msg;
    if (e.msg.find("tab") == std::string::npos && tab_in_indentation(text, loc))
      message += " (a tab in the indentation: YAML indents with spaces)";
    diags.error(loc, message, diag::kYamlSyntax);
  }
  return builder.take();
}

}  // namespace aasmc

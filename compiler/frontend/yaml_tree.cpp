#include "frontend/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <llvm/Support/ConvertUTF.h>
#include <llvm/Support/MemoryBuffer.h>

#include <sstream>

namespace aasmc {
namespace {

llvm::SMLoc loc_of(llvm::SourceMgr& sources, unsigned buffer, const YAML::Mark& mark) {
  if (mark.line < 0 || mark.column < 0)
    return llvm::SMLoc::getFromPointer(sources.getMemoryBuffer(buffer)->getBufferStart());
  return sources.FindLocForLineAndColumn(buffer, unsigned(mark.line) + 1, unsigned(mark.column) + 1);
}

// "?" is yaml-cpp's tag for a plain node, "!" for a quoted scalar; anything
// else was written explicitly (`!!str`, `!custom`).
bool is_explicit_tag(const std::string& tag) { return !tag.empty() && tag != "?" && tag != "!"; }

class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(unsigned buffer, Diagnostics& diags) : buffer_(buffer), diags_(diags) {}

  std::vector<YamlDocument> take() { return std::move(documents_); }

  void OnDocumentStart(const YAML::Mark& mark) override {
    current_ = YamlDocument{buffer_, at(mark), {}};
    failed_ = false;
    stack_.clear();
    have_root_ = false;
  }
  void OnDocumentEnd() override {
    if (!failed_ && have_root_) documents_.push_back(std::move(current_));
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
    if (stack_.size() == kMaxNestingDepth)  // reported once, where it first happens
      fail(mark, "nesting deeper than " + std::to_string(kMaxNestingDepth) + " levels", diag::kTooLarge);
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
  void check_duplicate(const Frame& frame) {
    if (frame.key.kind != YamlNode::Kind::kScalar) return;  // non-scalar keys fail later as wrong types
    for (const auto& [key, value] : frame.node.entries) {
      if (key.kind == YamlNode::Kind::kScalar && key.scalar == frame.key.scalar) {
        diags_.error(frame.key.loc, "duplicate key '" + key.scalar + "'", diag::kDuplicateKey, frame.key.range());
        diags_.note(key.loc, "first set here");
        failed_ = true;
        return;
      }
    }
  }

  unsigned buffer_;
  Diagnostics& diags_;
  std::vector<YamlDocument> documents_;
  YamlDocument current_;
  std::vector<Frame> stack_;
  bool have_root_ = false;
  bool failed_ = false;
};

// Policies are UTF-8 text: NUL and malformed sequences are refused up front,
// pointing at the first bad byte.
bool check_encoding(unsigned buffer, Diagnostics& diags) {
  llvm::StringRef text = diags.sources().getMemoryBuffer(buffer)->getBuffer();
  if (text.size() > kMaxPolicyFileBytes) {
    diags.error(llvm::SMLoc::getFromPointer(text.begin()),
                "policy file is " + std::to_string(text.size()) + " bytes, over the " +
                    std::to_string(kMaxPolicyFileBytes) + "-byte limit",
                diag::kTooLarge);
    return false;
  }
  if (size_t nul = text.find('\0'); nul != llvm::StringRef::npos) {
    diags.error(llvm::SMLoc::getFromPointer(text.begin() + nul), "NUL byte in policy file", diag::kEncoding);
    return false;
  }
  const auto* begin = reinterpret_cast<const llvm::UTF8*>(text.begin());
  const llvm::UTF8* bad = begin;
  if (!llvm::isLegalUTF8String(&bad, reinterpret_cast<const llvm::UTF8*>(text.end()))) {
    diags.error(llvm::SMLoc::getFromPointer(reinterpret_cast<const char*>(bad)),
                "policy file is not valid UTF-8", diag::kEncoding);
    return false;
  }
  return true;
}

}  // namespace

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
  if (!check_encoding(buffer, diags)) return {};
  llvm::StringRef text = diags.sources().getMemoryBuffer(buffer)->getBuffer();
  std::istringstream stream{std::string(text)};
  TreeBuilder builder(buffer, diags);
  try {
    YAML::Parser parser(stream);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const YAML::Exception& e) {
    diags.error(loc_of(diags.sources(), buffer, e.mark), "YAML syntax error: " + e.msg, diag::kYamlSyntax);
  }
  return builder.take();
}

}  // namespace aasmc

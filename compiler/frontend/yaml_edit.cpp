#include "frontend/yaml_edit.h"

#include <llvm/ADT/STLExtras.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "tables/syscall_groups.h"
#include "tables/targets.h"

namespace aasmc {
namespace {

using Kind = YamlNode::Kind;
constexpr size_t kNone = std::string::npos;
constexpr auto kNoPlace = EditPlan::Note::Kind::kNoPlace;
constexpr auto kWidens = EditPlan::Note::Kind::kWidens;
constexpr auto kByHand = EditPlan::Note::Kind::kByHand;
constexpr const char* kCommentPrefix = "# aasmc suggest: ";

// A scalar as this edit writes it: plain where YAML reads it back as the
// same string in block and flow context alike, else double-quoted. A flow
// mapping (a syscalls.rules item the report writes out) goes as it is.
std::string yaml_scalar(const std::string& value, bool prefer_quotes) {
  if (!value.empty() && value[0] == '{') return value;
  static const std::set<std::string> kWords = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"};
  std::string lower = value;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  const bool plain = !prefer_quotes && !value.empty() && !kWords.count(lower) && value[0] != '-' &&
                     std::all_of(value.begin(), value.end(), [](unsigned char c) {
                       return std::isalnum(c) || c == '_' || c == '/' || c == '.' || c == '-';
                     });
  if (plain) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// Where a node was found: its parent, whether it is a key, and the start of
// the outermost flow collection around it (a comment line must go above
// that, in block context).
struct Hit {
  const YamlNode* node = nullptr;
  const YamlNode* parent = nullptr;
  const YamlEntry* entry = nullptr;  // the node is this entry's key or value
  size_t outer_flow = kNone;
};

class Editor {
 public:
  Editor(llvm::StringRef text, const YamlDocument& document) : t_(text), doc_(document) {}

  EditPlan run(const std::vector<PolicyEdit>& edits) {
    std::vector<std::pair<std::string, std::vector<const PolicyEdit*>>> adds;  // per list, in order
    std::map<size_t, std::vector<const PolicyEdit*>> at_node;                  // per node offset
    std::vector<size_t> node_order;
    for (const PolicyEdit& e : edits) {
      if (e.op == "add") {
        auto it = std::find_if(adds.begin(), adds.end(), [&](const auto& a) { return a.first == e.list; });
        if (it == adds.end()) it = adds.insert(adds.end(), {e.list, {}});
        if (std::none_of(it->second.begin(), it->second.end(), [&](const PolicyEdit* x) { return x->item == e.item; }))
          it->second.push_back(&e);
        continue;
      }
      const size_t at = offset_of(e.line, e.column);
      if (at == kNone) {
        note(0, e.list + ": line " + std::to_string(e.line) + " column " + std::to_string(e.column) +
                    " is not in this file: was it changed since the plan was compiled?", kNoPlace);
        continue;
      }
      if (!at_node.count(at)) node_order.push_back(at);
      at_node[at].push_back(&e);
    }
    for (auto& [list, items] : adds) add(list, items);
    for (size_t at : node_order) at_line(at, at_node[at]);
    // Lines added after a last line without its newline: it gets one, once.
    const bool at_end = std::any_of(plan_.changes.begin(), plan_.changes.end(),
                                    [&](const TextEdit& c) { return c.offset == t_.size() && c.length == 0; });
    if (at_end && !t_.empty() && t_.back() != '\n') plan_.changes.insert(plan_.changes.begin(), {t_.size(), 0, "\n"});
    return std::move(plan_);
  }

 private:
  // --- the text ---------------------------------------------------------

  size_t off(const YamlNode& n) const { return size_t(n.loc.getPointer() - t_.data()); }
  char ch(size_t o) const { return o < t_.size() ? t_[o] : '\0'; }
  bool is_flow(const YamlNode& n) const {
    return (n.kind == Kind::kSequence && ch(off(n)) == '[') || (n.kind == Kind::kMap && ch(off(n)) == '{');
  }
  size_t line_start(size_t o) const {
    const size_t nl = t_.rfind('\n', std::min(o, t_.size()) == 0 ? 0 : std::min(o, t_.size()) - 1);
    return o == 0 || nl == llvm::StringRef::npos ? 0 : nl + 1;
  }
  // The offset after the line holding `o` (after its '\n'), or the end.
  size_t next_line(size_t o) const {
    const size_t nl = t_.find('\n', o);
    return nl == llvm::StringRef::npos ? t_.size() : nl + 1;
  }
  std::string indent_at(size_t o) const {
    size_t s = line_start(o), e = s;
    while (ch(e) == ' ') ++e;
    return std::string(e - s, ' ');
  }
  size_t offset_of(unsigned line, unsigned column) const {
    if (line == 0 || column == 0) return kNone;
    size_t o = 0;
    for (unsigned l = 1; l < line; ++l) {
      o = t_.find('\n', o);
      if (o == llvm::StringRef::npos) return kNone;
      ++o;
    }
    const size_t found = o + column - 1;
    return found < next_line(o) ? found : kNone;
  }

  // The closing bracket of the flow collection opening at `open`, and the
  // offset just after the last character of its content (not a comment).
  struct FlowEnd {
    size_t close = kNone, last = kNone;
  };
  FlowEnd scan_flow(size_t open) const {
    FlowEnd end;
    int depth = 0;
    for (size_t i = open; i < t_.size(); ++i) {
      const char c = t_[i];
      if (c == '#' && (i == 0 || t_[i - 1] == ' ' || t_[i - 1] == '\t' || t_[i - 1] == '\n')) {
        i = next_line(i) - 1;
        continue;
      }
      if (c == '"' || c == '\'') {
        for (++i; i < t_.size() && t_[i] != c; ++i)
          if (c == '"' && t_[i] == '\\') ++i;
        end.last = i + 1;
        continue;
      }
      if (c == '[' || c == '{') ++depth;
      if ((c == ']' || c == '}') && --depth == 0) {
        end.close = i;
        return end;
      }
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') end.last = i + 1;
    }
    return end;
  }

  // The offset just after a node's text.
  size_t end_of(const YamlNode& n) const {
    const size_t o = off(n);
    switch (n.kind) {
      case Kind::kNull: return o;
      case Kind::kScalar: {
        const char q = ch(o);
        if (q != '"' && q != '\'') return o + n.scalar.size();
        size_t i = o + 1;
        for (; i < t_.size() && t_[i] != q; ++i)
          if (q == '"' && t_[i] == '\\') ++i;
        return i + 1;
      }
      case Kind::kSequence:
      case Kind::kMap:
        if (is_flow(n)) {
          const FlowEnd f = scan_flow(o);
          return f.close == kNone ? o : f.close + 1;
        }
        if (n.kind == Kind::kSequence) return n.items.empty() ? o : end_of(n.items.back());
        if (n.entries.empty()) return o;
        return n.entries.back().value.kind == Kind::kNull ? end_of(n.entries.back().key) : end_of(n.entries.back().value);
    }
    return o;
  }

  // --- the tree ---------------------------------------------------------

  static const YamlEntry* entry(const YamlNode& map, llvm::StringRef key) {
    if (map.kind != Kind::kMap) return nullptr;
    for (const YamlEntry& e : map.entries)
      if (e.key.kind == Kind::kScalar && e.key.scalar == key) return &e;
    return nullptr;
  }

  bool find(const YamlNode& n, size_t target, Hit context, Hit& out) const {
    if (n.kind != Kind::kScalar && n.kind != Kind::kNull && is_flow(n) && context.outer_flow == kNone)
      context.outer_flow = off(n);
    if (off(n) == target && n.kind == Kind::kScalar) {
      out = context;
      out.node = &n;
      return true;
    }
    Hit child = context;
    child.parent = &n;
    for (const YamlNode& item : n.items)
      if (child.entry = nullptr; find(item, target, child, out)) return true;
    for (const YamlEntry& e : n.entries) {
      child.entry = &e;
      if (find(e.key, target, child, out) || find(e.value, target, child, out)) return true;
    }
    return false;
  }

  // The map entry whose value is `value`.
  static const YamlEntry* owner_of(const YamlNode& n, const YamlNode* value) {
    for (const YamlEntry& e : n.entries)
      if (&e.value == value) return &e;
    for (const YamlEntry& e : n.entries)
      if (const YamlEntry* found = owner_of(e.value, value)) return found;
    for (const YamlNode& item : n.items)
      if (const YamlEntry* found = owner_of(item, value)) return found;
    return nullptr;
  }

  // --- the edits --------------------------------------------------------

  void note(size_t at, std::string message, EditPlan::Note::Kind kind) {
    plan_.notes.push_back({at, std::move(message), kind});
  }
  void insert(size_t at, std::string text) { plan_.changes.push_back({at, 0, std::move(text)}); }
  void replace(size_t from, size_t to, std::string text) { plan_.changes.push_back({from, to - from, std::move(text)}); }

  // A comment line above the line of `anchor`, at its indentation.
  void comment_above(size_t anchor, const std::string& text) {
    insert(line_start(anchor), indent_at(anchor) + kCommentPrefix + text + "\n");
  }
  void warn_widening(size_t anchor, const PolicyEdit& e, const std::string& what) {
    if (e.widens.empty() || !warned_.insert({line_start(anchor), what + e.widens}).second) return;
    comment_above(anchor, what + " widens " + e.widens + ": review it before applying");
    note(anchor, what + " widens " + e.widens + ": review it before applying", kWidens);
  }

  const YamlNode* spec() const {
    const YamlEntry* s = entry(doc_.root, "spec");
    return s ? &s->value : nullptr;
  }

  static bool holds(const YamlNode& list, const std::string& item) {
    for (const YamlNode& n : list.items) {
      if (n.kind == Kind::kScalar && n.scalar == item) return true;
      // {syscall: NAME, action: allow}
      const YamlEntry* call = entry(n, "syscall");
      const YamlEntry* action = entry(n, "action");
      if (call && action && !entry(n, "when") &&
          "{syscall: " + call->value.scalar + ", action: " + action->value.scalar + "}" == item)
        return true;
    }
    return false;
  }

  static bool quotes_items(const YamlNode& list) {
    return std::any_of(list.items.begin(), list.items.end(), [](const YamlNode& n) { return n.quoted; });
  }

  void add(const std::string& list, std::vector<const PolicyEdit*> items) {
    if (list == "syscalls.allow")
      for (const PolicyEdit* e : items)
        for (const Target& t : all_targets())
          if (!syscall_number(t, e->item))
            note(0, e->item + " does not exist on " + std::string(t.name) + ": compile with --arch for the targets that have it",
                 kByHand);
    const YamlNode* node = spec();
    if (!node || node->kind != Kind::kMap) {
      note(0, "the document has no spec: mapping to add " + list + " to", kNoPlace);
      return;
    }
    std::vector<std::string> keys;
    for (llvm::StringRef rest = list; !rest.empty();) {
      auto [head, tail] = rest.split('.');
      keys.push_back(head.str());
      rest = tail;
    }
    size_t outer_flow = is_flow(*node) ? off(*node) : kNone;
    size_t depth = 0;
    const YamlEntry* last_entry = nullptr;
    for (; depth < keys.size(); ++depth) {
      const YamlEntry* e = entry(*node, keys[depth]);
      if (!e) break;
      last_entry = e;
      node = &e->value;
      if (node->kind != Kind::kNull && node->kind != Kind::kScalar && is_flow(*node) && outer_flow == kNone)
        outer_flow = off(*node);
    }
    if (depth == keys.size() && node->kind == Kind::kSequence) {
      items.erase(std::remove_if(items.begin(), items.end(), [&](const PolicyEdit* e) { return holds(*node, e->item); }),
                  items.end());
      if (!items.empty()) add_to_list(*node, items, outer_flow);
      return;
    }
    if (items.empty()) return;
    std::vector<std::string> texts;
    for (const PolicyEdit* e : items) texts.push_back(yaml_scalar(e->item, false));
    const std::string flow_list = "[" + join(texts, ", ") + "]";
    if (depth == keys.size() && node->kind == Kind::kNull && last_entry) {  // `allow:` with nothing
      const size_t colon = t_.find(':', end_of(last_entry->key));
      insert(colon + 1, " " + flow_list);
      for (const PolicyEdit* e : items) warn_widening(outer_flow == kNone ? colon : outer_flow, *e, "adding " + e->item);
      return;
    }
    if (node->kind != Kind::kMap) {
      note(node == spec() ? 0 : off(*node),
           "cannot add to " + list + ": " + keys[depth - 1] + " here is " + node->kind_name() + ", not a mapping", kNoPlace);
      return;
    }
    // Create the missing keys beneath the deepest existing mapping.
    std::string inner = flow_list;
    for (size_t k = keys.size(); k-- > depth + 1;) inner = "{" + keys[k] + ": " + inner + "}";
    if (is_flow(*node)) {
      const FlowEnd f = scan_flow(off(*node));
      const bool empty = ch(f.last - 1) == '{';
      insert(f.last, std::string(empty ? "" : ch(f.last - 1) == ',' ? " " : ", ") + keys[depth] + ": " + inner);
      for (const PolicyEdit* e : items) warn_widening(outer_flow == kNone ? off(*node) : outer_flow, *e, "adding " + e->item);
      return;
    }
    const size_t where = next_line(end_of(*node));
    const std::string indent(off(*node) - line_start(off(*node)), ' ');
    std::string text;
    for (const PolicyEdit* e : items)
      if (!e->widens.empty()) {
        text += indent + kCommentPrefix + "adding " + e->item + " widens " + e->widens + ": review it before applying\n";
        note(off(*node), "adding " + e->item + " widens " + e->widens + ": review it before applying", kWidens);
      }
    std::string nested;
    for (size_t k = depth; k + 1 < keys.size(); ++k) nested += indent + std::string(2 * (k - depth), ' ') + keys[k] + ":\n";
    text += nested + indent + std::string(2 * (keys.size() - 1 - depth), ' ') + keys.back() + ": " + flow_list + "\n";
    insert(where, text);
  }

  void add_to_list(const YamlNode& list, const std::vector<const PolicyEdit*>& items, size_t outer_flow) {
    const bool quotes = quotes_items(list);
    if (is_flow(list)) {
      const FlowEnd f = scan_flow(off(list));
      std::vector<std::string> texts;
      for (const PolicyEdit* e : items) texts.push_back(yaml_scalar(e->item, quotes));
      const char last = ch(f.last - 1);
      insert(f.last, std::string(last == '[' ? "" : last == ',' ? " " : ", ") + join(texts, ", "));
      for (const PolicyEdit* e : items) warn_widening(outer_flow, *e, "adding " + e->item);
      return;
    }
    const size_t where = next_line(end_of(list));
    const std::string indent(off(list) - line_start(off(list)), ' ');
    std::string text;
    for (const PolicyEdit* e : items) {
      if (!e->widens.empty()) {
        text += indent + kCommentPrefix + "adding " + e->item + " widens " + e->widens + ": review it before applying\n";
        note(off(list), "adding " + e->item + " widens " + e->widens + ": review it before applying", kWidens);
      }
      text += indent + "- " + yaml_scalar(e->item, quotes) + "\n";
    }
    insert(where, text);
  }

  // remove, set or change at the node starting at `at`.
  void at_line(size_t at, const std::vector<const PolicyEdit*>& edits) {
    Hit hit;
    if (!find(doc_.root, at, Hit{}, hit)) {
      note(at, edits.front()->list + ": no scalar starts here: was the file changed since the plan was compiled?", kNoPlace);
      return;
    }
    const PolicyEdit& first = *edits.front();
    const size_t anchor = hit.outer_flow == kNone ? at : std::min(at, hit.outer_flow);
    if (first.op == "set") return set(hit, edits, anchor);
    if (first.op == "change" && first.list == "syscalls.rules") {
      const YamlNode* action = hit.entry && &hit.entry->key == hit.node ? &hit.entry->value : hit.node;
      if (action->kind != Kind::kScalar) return note(at, "the rule's action here is not a scalar", kNoPlace);
      replace(off(*action), end_of(*action), "allow");
      for (const PolicyEdit* e : edits) warn_widening(anchor, *e, "allowing " + e->item);
      return;
    }
    // remove (syscalls.deny, capabilities.deny), and change of a
    // capabilities.deny domain: the entry here leaves its list.
    remove(hit, edits, anchor);
  }

  void set(const Hit& hit, const std::vector<const PolicyEdit*>& edits, size_t anchor) {
    const YamlNode& value = hit.entry && &hit.entry->key == hit.node ? hit.entry->value : *hit.node;
    // Several sets of one node ({allow: [tcp:443]}, {allow: [tcp:80]}) are one.
    std::vector<std::string> allowed;
    std::string whole;
    for (const PolicyEdit* e : edits) {
      const llvm::StringRef item = e->item;
      if (item.startswith("{allow: [") && item.endswith("]}")) {
        for (llvm::StringRef rest = item.drop_front(9).drop_back(2); !rest.empty();) {
          auto [head, tail] = rest.split(", ");
          if (std::find(allowed.begin(), allowed.end(), head.trim().str()) == allowed.end()) allowed.push_back(head.trim().str());
          rest = tail;
        }
      } else {
        whole = e->item;
      }
    }
    std::string text = whole.empty() ? "" : yaml_scalar(whole, false);
    if (!allowed.empty()) {
      for (std::string& a : allowed) a = yaml_scalar(a, true);
      text = "{allow: [" + join(allowed, ", ") + "]}";
    }
    if (value.kind == Kind::kScalar || (value.kind != Kind::kNull && is_flow(value))) {
      replace(off(value), end_of(value), text);
    } else {
      return note(off(*hit.node), "cannot set " + edits.front()->list + ": its value here is a block " +
                                      value.kind_name() + "; set it to " + text + " by hand", kNoPlace);
    }
    for (const PolicyEdit* e : edits) warn_widening(anchor, *e, "setting " + e->list);
  }

  void remove(const Hit& hit, const std::vector<const PolicyEdit*>& edits, size_t anchor) {
    const YamlNode& node = *hit.node;
    const size_t start = off(node);
    if (!hit.parent || hit.parent->kind != Kind::kSequence)
      return note(start, edits.front()->list + ": the entry here is not an item of a list", kNoPlace);
    for (const PolicyEdit* e : edits) warn_widening(anchor, *e, "removing " + e->item);
    std::vector<std::string> members;  // what stays of a group
    if (node.scalar.size() > 1 && node.scalar[0] == '@' &&
        std::none_of(edits.begin(), edits.end(), [&](const PolicyEdit* e) { return e->item == node.scalar; }) &&
        edits.front()->list == "syscalls.deny") {
      const SyscallGroup* group = find_group(llvm::StringRef(node.scalar).drop_front());
      // A group keeps its members per architecture, a name must exist on
      // every one: a group with a member some target lacks (iopl), or with
      // argument rules, cannot be written out as names without widening.
      const auto everywhere = [](llvm::StringRef call) {
        return llvm::all_of(all_targets(), [&](const Target& t) { return syscall_number(t, call).has_value(); });
      };
      if (!group || !group->rules.empty() ||
          !llvm::all_of(group->members, [&](const GroupMember& m) { return everywhere(m.syscall); })) {
        std::vector<std::string> names;
        for (const PolicyEdit* e : edits) names.push_back(e->item);
        const std::string why = group && !group->rules.empty() ? "it also holds argument rules"
                                                                : "some of its members exist only on some architectures";
        comment_above(anchor, "by hand: " + node.scalar + " here denies " + join(names, ", ") + "; " + why +
                                  ", so write out its other members by hand (aasmc groups)");
        note(start, "by hand: " + node.scalar + " denies " + join(names, ", ") + ", and " + why +
                        ": write out its other members by hand (aasmc groups)", kByHand);
        return;
      }
      const auto listed = [&](llvm::StringRef call) {
        return llvm::any_of(hit.parent->items, [&](const YamlNode& n) { return n.scalar == call; });
      };
      for (const GroupMember& m : group->members)
        if (m.capability.empty() && !listed(m.syscall) &&
            std::none_of(edits.begin(), edits.end(), [&](const PolicyEdit* e) { return e->item == m.syscall; }))
          members.push_back(yaml_scalar(m.syscall.str(), quotes_items(*hit.parent)));
    }
    const size_t end = end_of(node);
    if (!members.empty()) {
      const std::string separator = is_flow(*hit.parent) ? ", " : "\n" + indent_at(off(*hit.parent)) + "- ";
      replace(start, end, join(members, separator));
      return;
    }
    if (is_flow(*hit.parent)) {
      size_t after = end;
      while (ch(after) == ' ' || ch(after) == '\t') ++after;
      if (ch(after) == ',') {
        for (++after; ch(after) == ' ' || ch(after) == '\t';) ++after;
        return replace(start, after, "");
      }
      size_t before = start;
      while (before > 0 && (t_[before - 1] == ' ' || t_[before - 1] == '\t' || t_[before - 1] == '\n')) --before;
      if (before > 0 && t_[before - 1] == ',') return replace(before - 1, end, "");
      return replace(start, end, "");
    }
    if (hit.parent->items.size() == 1) {  // the list becomes `[]`, after its key
      const YamlEntry* owner = owner_of(doc_.root, hit.parent);
      if (!owner) return note(start, "removing " + node.scalar + " empties this list: write it as [] by hand", kNoPlace);
      return replace(t_.find(':', end_of(owner->key)) + 1, next_line(end), " []\n");
    }
    const size_t from = line_start(start);
    llvm::StringRef lead = t_.slice(from, start).trim();
    llvm::StringRef rest = t_.slice(end, next_line(end)).trim();
    if (lead != "-" || !(rest.empty() || rest.startswith("#")))
      return note(start, "the list item here shares its line; remove " + node.scalar + " by hand", kNoPlace);
    replace(from, next_line(end), "");
  }

  llvm::StringRef t_;
  const YamlDocument& doc_;
  EditPlan plan_;
  std::set<std::pair<size_t, std::string>> warned_;  // one comment per line and warning
};

// The text split in lines, each with its '\n' (the last may lack it).
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t s = 0; s < text.size();) {
    const size_t nl = text.find('\n', s);
    const size_t e = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(s, e - s));
    s = e;
  }
  return lines;
}

void put_line(std::string& out, char mark, std::string_view line) {
  out += mark;
  out += line;
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

}  // namespace

EditPlan plan_policy_edits(llvm::StringRef text, const YamlDocument& document, const std::vector<PolicyEdit>& edits) {
  return Editor(text, document).run(edits);
}

std::string apply_text_edits(llvm::StringRef text, std::vector<TextEdit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) {
    return a.offset != b.offset ? a.offset < b.offset : (a.length == 0) > (b.length == 0);
  });
  std::string out;
  size_t done = 0;
  for (const TextEdit& e : edits) {
    out += text.slice(done, std::max(done, e.offset)).str();
    out += e.text;
    done = std::max(done, e.offset + e.length);
  }
  return out + text.substr(done).str();
}

std::string unified_diff(llvm::StringRef name, llvm::StringRef old_text, const std::vector<TextEdit>& edits) {
  const std::string_view text(old_text.data(), old_text.size());
  const std::vector<std::string_view> old_lines = lines_of(text);
  std::vector<size_t> starts;  // each line's offset, and the end
  for (std::string_view l : old_lines) starts.push_back(size_t(l.data() - text.data()));
  starts.push_back(text.size());
  const auto line_of = [&](size_t o) { return size_t(std::upper_bound(starts.begin(), starts.end() - 1, o) - starts.begin()) - 1; };

  // Each edit widened to whole lines [first, last); overlapping ones merged.
  struct Change {
    size_t first, last;
    std::vector<TextEdit> edits;
  };
  std::vector<TextEdit> sorted = edits;
  std::stable_sort(sorted.begin(), sorted.end(), [](const TextEdit& a, const TextEdit& b) { return a.offset < b.offset; });
  std::vector<Change> changes;
  for (const TextEdit& e : sorted) {
    size_t first, last;
    if (e.offset >= text.size() && (text.empty() || text.back() == '\n')) {
      first = last = old_lines.size();
    } else if (e.length == 0 && starts[line_of(e.offset)] == e.offset) {
      first = last = line_of(e.offset);
    } else {
      first = line_of(std::min(e.offset, text.size() - 1));
      last = line_of(std::min(e.offset + std::max<size_t>(e.length, 1) - 1, text.size() - 1)) + 1;
    }
    if (!changes.empty() && first < changes.back().last) {
      changes.back().last = std::max(changes.back().last, last);
      changes.back().edits.push_back(e);
    } else {
      changes.push_back({first, last, {e}});
    }
  }
  std::string out;
  constexpr size_t kContext = 3;
  long delta = 0;  // new line numbers minus old, before the hunk
  for (size_t c = 0; c < changes.size();) {
    size_t end = c + 1;  // changes [c, end) make one hunk
    while (end < changes.size() && changes[end].first <= changes[end - 1].last + 2 * kContext) ++end;
    const size_t from = changes[c].first > kContext ? changes[c].first - kContext : 0;
    const size_t to = std::min(old_lines.size(), changes[end - 1].last + kContext);
    std::string body;
    size_t old_count = 0, new_count = 0;
    long hunk_delta = 0;
    size_t line = from;
    for (size_t k = c; k < end; ++k) {
      for (; line < changes[k].first; ++line, ++old_count, ++new_count) put_line(body, ' ', old_lines[line]);
      const size_t a = starts[changes[k].first], b = starts[changes[k].last];
      std::vector<TextEdit> local = changes[k].edits;
      for (TextEdit& e : local) e.offset -= a;
      const std::string replaced = apply_text_edits(old_text.slice(a, b), local);
      const std::vector<std::string_view> new_lines = lines_of(replaced);
      for (; line < changes[k].last; ++line, ++old_count) put_line(body, '-', old_lines[line]);
      for (std::string_view l : new_lines) put_line(body, '+', l), ++new_count;
      hunk_delta += long(new_lines.size()) - long(changes[k].last - changes[k].first);
    }
    for (; line < to; ++line, ++old_count, ++new_count) put_line(body, ' ', old_lines[line]);
    if (old_count == 0 && new_count == 0) {
      c = end;
      continue;
    }
    const auto range = [](size_t start, size_t count) {
      return std::to_string(count ? start + 1 : start) + "," + std::to_string(count);
    };
    out += "@@ -" + range(from, old_count) + " +" + range(size_t(long(from) + delta), new_count) + " @@\n" + body;
    delta += hunk_delta;
    c = end;
  }
  if (out.empty()) return "";
  return "--- " + name.str() + "\n+++ " + name.str() + "\n" + out;
}

}  // namespace aasmc

#include "supervisor/denials.h"

namespace aasm::denials {

void Log::add(Denial denial) {
  if (denial.path.size() > kMaxText) denial.path.resize(kMaxText);
  if (denial.arguments.size() > kMaxText) denial.arguments.resize(kMaxText);
  Key key = denial.key();
  if (auto seen = index_.find(key); seen != index_.end()) {
    ++entries_[seen->second].count;
    return;
  }
  if (entries_.size() >= kMaxDistinct) {
    ++dropped_;
    return;
  }
  index_.emplace(std::move(key), entries_.size());
  entries_.push_back({std::move(denial), 1});
}

}  // namespace aasm::denials

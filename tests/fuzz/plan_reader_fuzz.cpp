// libFuzzer target for the plan reader: decode_plan must refuse or accept
// any byte string without reading out of bounds, overflowing or aborting.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "crypto/sha256.h"
#include "plan/plan.h"

namespace {

void decode(std::span<const uint8_t> bytes) {
  auto plan = aasm::plan::decode_plan(bytes);
  if (!plan) {
    if (plan.error().message.empty()) std::abort();  // every refusal names its reason
    return;
  }
  // What the reader accepts keeps its promises.
  for (size_t i = 1; i < plan->meta.size(); ++i)
    if (!(plan->meta[i - 1].first < plan->meta[i].first)) std::abort();
  for (const auto& program : plan->seccomp)
    if (program.instructions.empty() || program.instructions.size() > aasm::plan::kMaxBpfInstructions)
      std::abort();
  if (plan->landlock && plan->landlock->rules.size() > aasm::plan::kMaxLandlockRules) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  decode({data, size});
  // Almost every mutation breaks the SHA-256 trailer, which would stop the
  // reader before the section table. Decode a copy with the trailer
  // recomputed too, so mutations reach the table and section parsers.
  if (size >= aasm::plan::kDigestSize) {
    std::vector<uint8_t> sealed(data, data + size);
    const size_t body = size - aasm::plan::kDigestSize;
    const aasm::Sha256Digest digest = aasm::sha256({sealed.data(), body});
    std::copy(digest.begin(), digest.end(), sealed.begin() + long(body));
    decode(sealed);
  }
  return 0;
}

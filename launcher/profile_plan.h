// aasm-launch --profile NAME (docs/cli.md#aasm-launch---profile-name): a
// shipped profile compiled by the aasmc installed beside the launcher into
// a per-user cache, keyed by the profile's bytes and the compiler's version.
// It runs before the launch path and only hands it a plan path and the
// identity that plan must have; the launcher never links the compiler.
#pragma once

#include <string>

#include "base/result.h"
#include "crypto/sha256.h"

namespace aasm {

struct ProfilePlan {
  std::string path;       // the cached plan, loaded as any PLAN argument is
  Sha256Digest identity;  // its verified SHA-256 trailer (--expect-digest for the launch)
};

// The cached plan of shipped profile `name`, compiled first where the cache
// has none for this profile and compiler; it prints which plan it took on
// stderr. Errors (an unknown name, a path, a cache others may write, a cached
// plan that fails the reader's checks) carry the remedy.
Result<ProfilePlan> profile_plan(const std::string& name);

}  // namespace aasm

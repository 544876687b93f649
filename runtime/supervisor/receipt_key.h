// The key of a receipt's keyed digests (docs/receipts.md#redaction): the
// caller's (--receipt-key-file), or this host's, made once, mode 0600.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace aasm {

struct ReceiptKey {
  std::vector<uint8_t> bytes;
  std::string source;  // "host" or "caller"
};

// Where this host's key lives: $XDG_STATE_HOME/aasm/receipt.key where
// XDG_STATE_HOME is an absolute path, else /var/lib/aasm/receipt.key for
// root, else $HOME/.local/state/aasm/receipt.key.
Result<std::string> host_key_path();

// The caller's key file (at least 32 bytes, a regular file no one else may
// read), or else this host's key, created with 32 random bytes the first
// time (a new file linked into place, so two launches agree on one key).
Result<ReceiptKey> load_receipt_key(const std::optional<std::string>& key_file);

// The keyed digest of `value` under `label` (which field it is), hex: a
// path and an argument with equal text digest differently.
std::string keyed_digest(const ReceiptKey& key, const std::string& label, const std::string& value);

}  // namespace aasm

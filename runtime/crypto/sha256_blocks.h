// The SHA-256 block function, in two implementations: portable C++ and the
// x86 SHA extensions (SHA-NI), which hash a plan about ten times faster. The
// launcher hashes the whole plan file on every launch, so this is on its
// critical path (docs/benchmarks.md, "Launch time").
#pragma once

#include <cstddef>
#include <cstdint>

namespace aasm::sha256_blocks {

// Runs `count` 64-byte blocks through the compression function.
using CompressFn = void (*)(uint32_t state[8], const uint8_t* blocks, size_t count);

void compress_portable(uint32_t state[8], const uint8_t* blocks, size_t count);

// The SHA-NI version, or nullptr when this CPU (or architecture) has none.
CompressFn hardware();

// hardware() when there is one, otherwise the portable version; decided once.
CompressFn best();

}  // namespace aasm::sha256_blocks

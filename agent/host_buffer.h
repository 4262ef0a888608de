// Host-side contents of kernel-program buffers: deterministic initial data, element sizes, conversion to float for
// comparison, and the canary tail that detects out-of-bounds writes.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/tunefleet.pb.h"

namespace tunefleet::agent {

// Bytes of the canary tail put after every device buffer: a write past a buffer's end within them is found (a job's
// WRONG_ANSWER, kOutOfBoundsMessage); one beyond them may corrupt other memory. 64 KiB holds a kernel's index off by a
// whole row or tile (a write 76 floats past the end passed 256 bytes of canary unseen) at a cost of one 64 KiB write
// and read per buffer and job.
inline constexpr size_t kCanaryBytes = 64 * 1024;
// The start of the message of a job whose kernel wrote into a canary; the buffer's name follows, in quotes.
inline constexpr const char* kOutOfBoundsMessage = "out-of-bounds write into buffer ";

size_t ElementBytes(proto::ElemType type);

// The initial bytes of `spec` (count elements, no canary). RANDOM draws uniform values in [lo, hi) from a
// generator seeded only by `seed`, so the same spec gives the same bytes in the candidate and the reference.
// FLOAT16 holds IEEE half; INT32 holds integers in [floor(lo), floor(hi)).
std::vector<uint8_t> InitialContents(const proto::BufferSpec& spec);

// The canary pattern of kCanaryBytes bytes (made once).
const std::vector<uint8_t>& CanaryPattern();

// Interprets `count` elements of `bytes` as `type` and widens them to float.
std::vector<float> ToFloats(proto::ElemType type, const uint8_t* bytes, size_t count);

}  // namespace tunefleet::agent

// The bytes of a kernel pack file, read with the checks an application needs before it parses a file it may not
// control: a regular file (not a directory, FIFO or device) of at most `max_bytes`, opened non-blocking so that a
// FIFO cannot stall the caller, checked through the open descriptor so that what is read is what was checked, and
// refused when it grows past the limit while being read.
// Thread safety: plain function.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace tunefleet::runtime {

// Errors name `path`: NotFound (no such file), InvalidArgument (a directory, not a regular file, too large),
// IOError (open, stat or read failed, with the system's reason).
Result<std::string> ReadPackFile(const std::string& path, int64_t max_bytes);

}  // namespace tunefleet::runtime

// WriteFileAtomically: a file written whole or not at all. The content goes to PATH.partial first and is renamed
// over PATH only when writing it succeeded, so a reader (or the user, after a failed export) finds PATH as it was
// before, or absent, or complete; never cut short. A failure removes PATH.partial. The replaced file keeps its mode.
// A name too long for the suffix (within 8 bytes of its file system's name limit) has a partial file of its name
// cut, plus a hash.
// A symbolic link stays a link (the file it names is replaced); what a rename must not replace (a device such as
// /dev/null, a FIFO) is written in place; a directory is refused.
// Thread safety: plain function; two writers of one path race on the rename (the last one wins, whole).
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "common/status.h"

namespace tunefleet {

// ": <cause>" (": No space left on device") for an errno that a failed write or close sets; "" for any other (a stale
// one, left by an unrelated call).
std::string WriteErrorCause(int err);

// Calls `write` with a stream on PATH.partial. Errors: `write`'s own, or IOError naming `path` when it is a directory,
// or the partial file cannot be opened or written, or cannot replace `path`.
Status WriteFileAtomically(const std::string& path, const std::function<Status(std::ostream&)>& write);

// An output option's target: "-" is standard output (flushed; a failure is IOError "standard output: write failed:
// <cause>", whatever `write` said), anything else WriteFileAtomically.
Status WriteOutput(const std::string& path, const std::function<Status(std::ostream&)>& write);

// Flushes std::cout and stdout; IOError "standard output: write failed[: <cause>]" when anything written to them
// did not reach its file (a full disk, a closed stdout).
Status FlushStandardOutput();

}  // namespace tunefleet

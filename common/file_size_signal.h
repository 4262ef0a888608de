// IgnoreFileSizeLimitSignal: a write past the file-size limit (`ulimit -f`, RLIMIT_FSIZE) raises SIGXFSZ, whose
// default action kills the process without a word: a tune so killed printed no error line, left its session
// 'running' and its lease held until the tracker's lease TTL ran out. Ignored, the write fails with EFBIG instead,
// and the error is said and handled as any other failed write ("File too large"). Workers and other children
// started by exec inherit the ignored disposition.
// Thread safety: call at the start of main, before other threads exist.
#pragma once

#include <csignal>

namespace tunefleet {

inline void IgnoreFileSizeLimitSignal() { std::signal(SIGXFSZ, SIG_IGN); }

}  // namespace tunefleet

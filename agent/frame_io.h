// Framing for the agent ↔ worker socket: each message is [kind: 1 byte][length: 4 bytes little-endian][payload],
// the payload a serialized protobuf (or UTF-8 text for kError).
// Thread safety: pure functions over a file descriptor; one reader and one writer per descriptor at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace tunefleet::agent {

enum class FrameKind : uint8_t {
  kHello = 'H',   // worker → agent: proto::DeviceInfo, sent once when the worker is ready
  kError = 'E',   // worker → agent: text; the worker could not start (then it exits)
  kJob = 'J',     // agent → worker: proto::KernelProgram
  kWaiting = 'W', // worker → agent: empty; built, waiting for the device lock held by another agent (not timed)
  kBuilt = 'B',   // worker → agent: empty; the job's kernels are built and it starts running (BUILD vs RUN timeout)
  kResult = 'R',  // worker → agent: proto::MeasureResult
};

struct Frame {
  FrameKind kind = FrameKind::kError;
  std::string payload;
};

// Frames larger than this are refused on both ends (a corrupt length must not allocate gigabytes).
inline constexpr uint32_t kMaxFrameBytes = 256u << 20;

// Writes the whole frame; never raises SIGPIPE (a closed peer is an IOError).
Status WriteFrame(int fd, FrameKind kind, const std::string& payload);

// Reads one frame. `deadline` absent: wait forever. Errors: DeadlineExceeded when the deadline passes,
// Unavailable when the peer closed the connection (cleanly, between frames or mid-frame), Corruption on a bad
// header, IOError otherwise. When `cancel_fd` >= 0 and becomes readable, returns Unavailable("cancelled").
Result<Frame> ReadFrame(int fd, std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
                        int cancel_fd = -1);

}  // namespace tunefleet::agent

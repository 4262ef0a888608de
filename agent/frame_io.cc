#include "agent/frame_io.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tunefleet::agent {
namespace {

constexpr char kCancelledMessage[] = "cancelled";

Status SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(std::string("send to worker socket: ") + std::strerror(errno));
    }
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return Status::OK();
}

// Waits until `fd` is readable; honours the deadline and the cancel descriptor.
Status WaitReadable(int fd, const std::optional<std::chrono::steady_clock::time_point>& deadline, int cancel_fd) {
  for (;;) {
    int timeout_ms = -1;
    bool past_deadline = false;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline -
                                                                              std::chrono::steady_clock::now());
      // Past it, one look without waiting: what the peer sent in time (a result the reader was too late to read,
      // having been stopped or starved) is taken, not thrown away as a timeout.
      past_deadline = left.count() <= 0;
      timeout_ms = past_deadline ? 0 : static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30));
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    const int ready = poll(fds, cancel_fd >= 0 ? 2 : 1, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(std::string("poll: ") + std::strerror(errno));
    }
    if (cancel_fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) return Status::Unavailable(kCancelledMessage);
    if (fds[0].revents != 0) return Status::OK();  // readable, closed, or error: recv tells which
    if (past_deadline) return Status::DeadlineExceeded("no answer before the deadline");
  }
}

Status RecvAll(int fd, char* data, size_t size, const std::optional<std::chrono::steady_clock::time_point>& deadline,
               int cancel_fd) {
  while (size > 0) {
    TF_RETURN_IF_ERROR(WaitReadable(fd, deadline, cancel_fd));
    ssize_t got = recv(fd, data, size, 0);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) return Status::Unavailable("peer closed the connection");
      return Status::IOError(std::string("recv from worker socket: ") + std::strerror(errno));
    }
    if (got == 0) return Status::Unavailable("peer closed the connection");
    data += got;
    size -= static_cast<size_t>(got);
  }
  return Status::OK();
}

}  // namespace

Status WriteFrame(int fd, FrameKind kind, const std::string& payload) {
  if (payload.size() > kMaxFrameBytes) return Status::InvalidArgument("frame too large");
  char header[5];
  header[0] = static_cast<char>(kind);
  const uint32_t length = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) header[1 + i] = static_cast<char>((length >> (8 * i)) & 0xff);
  TF_RETURN_IF_ERROR(SendAll(fd, header, sizeof(header)));
  return SendAll(fd, payload.data(), payload.size());
}

Result<Frame> ReadFrame(int fd, std::optional<std::chrono::steady_clock::time_point> deadline, int cancel_fd) {
  unsigned char header[5];
  TF_RETURN_IF_ERROR(RecvAll(fd, reinterpret_cast<char*>(header), sizeof(header), deadline, cancel_fd));
  const FrameKind kind = static_cast<FrameKind>(header[0]);
  if (kind != FrameKind::kHello && kind != FrameKind::kError && kind != FrameKind::kJob &&
      kind != FrameKind::kBuilt && kind != FrameKind::kWaiting &&
      kind != FrameKind::kResult) {
    return Status::Corruption("unknown frame kind " + std::to_string(header[0]));
  }
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(header[1 + i]) << (8 * i);
  if (length > kMaxFrameBytes) return Status::Corruption("frame of " + std::to_string(length) + " bytes");
  Frame frame;
  frame.kind = kind;
  frame.payload.resize(length);
  TF_RETURN_IF_ERROR(RecvAll(fd, frame.payload.data(), length, deadline, cancel_fd));
  return frame;
}

}  // namespace tunefleet::agent

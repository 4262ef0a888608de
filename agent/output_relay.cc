#include "agent/output_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/printable.h"
#include "common/seconds.h"

namespace tunefleet::agent {

Result<std::unique_ptr<OutputRelay>> OutputRelay::Start(Limits limits, Sink sink) {
  std::unique_ptr<OutputRelay> relay(new OutputRelay(limits, std::move(sink)));
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::IOError(std::string("pipe2: ") + std::strerror(errno));
  relay->read_.reset(fds[0]);
  relay->write_.reset(fds[1]);
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::IOError(std::string("pipe2: ") + std::strerror(errno));
  relay->stop_read_.reset(fds[0]);
  relay->stop_write_.reset(fds[1]);
  // Read without blocking: the stop drains what is there and no more.
  if (fcntl(relay->read_.get(), F_SETFL, O_NONBLOCK) != 0) {
    return Status::IOError(std::string("fcntl(O_NONBLOCK): ") + std::strerror(errno));
  }
  relay->window_start_ = std::chrono::steady_clock::now();
  relay->thread_ = std::thread([r = relay.get()] { r->Loop(); });
  return relay;
}

OutputRelay::~OutputRelay() {
  if (thread_.joinable()) {
    const char byte = 0;
    while (write(stop_write_.get(), &byte, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
}

void OutputRelay::EndLine() {
  std::unique_lock<std::mutex> lock(ended_mu_);
  const uint64_t mine = ++ends_asked_;
  const char byte = 1;
  ssize_t n = 0;
  while ((n = write(stop_write_.get(), &byte, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) return;
  ended_cv_.wait_for(lock, std::chrono::seconds(1), [&] { return ends_done_ >= mine; });
}

bool OutputRelay::ReadControl() {
  char bytes[64];
  ssize_t n = 0;
  while ((n = read(stop_read_.get(), bytes, sizeof bytes)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return true;  // the control pipe's end: nothing can ask anything again
  ReadAvailable();  // what the last worker wrote before it went
  if (!line_.empty() || line_overflow_ > 0) Take("\n", 1);  // a line without its newline
  bool stop = false;
  uint64_t ends = 0;
  for (ssize_t i = 0; i < n; ++i) {
    if (bytes[i] == 0) {
      stop = true;
    } else {
      ++ends;
    }
  }
  if (ends > 0) {
    std::lock_guard<std::mutex> lock(ended_mu_);
    ends_done_ += ends;
    ended_cv_.notify_all();
  }
  return stop;
}

void OutputRelay::Loop() {
  for (;;) {
    pollfd fds[2] = {{read_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    const int ready = poll(fds, 2, static_cast<int>(limits_.window.count()));
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP)) != 0 && !ReadAvailable()) break;
    if (ready > 0 && (fds[1].revents & (POLLIN | POLLHUP)) != 0 && ReadControl()) break;
    EndWindowIfOver(std::chrono::steady_clock::now());
  }
  if (!line_.empty() || line_overflow_ > 0) Take("\n", 1);  // a last line without its newline
  EndWindow();
}

bool OutputRelay::ReadAvailable() {
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(read_.get(), buffer, sizeof buffer);
    if (n > 0) {
      Take(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);  // 0: every write end closed
  }
}

void OutputRelay::Take(const char* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (data[i] != '\n') {
      if (line_.size() < limits_.line_bytes) {
        line_ += data[i];
      } else {
        ++line_overflow_;
      }
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    EndWindowIfOver(now);
    const size_t bytes = line_.size() + line_overflow_ + 1;
    // Once a line is left out, the rest of the window is: no gap-filling by later, shorter lines. A line counts as
    // what is said of it (at most line_bytes).
    if (left_out_ == 0 && said_ + line_.size() + 1 <= limits_.bytes_per_window) {
      said_ += line_.size() + 1;
      std::string text = Printable(line_, limits_.line_bytes);
      if (line_overflow_ > 0) text += "... (" + std::to_string(line_.size() + line_overflow_) + " bytes)";
      Say("kernel output: " + text);
    } else {
      if (left_out_ == 0) {
        Say("kernel output: more than " + std::to_string(limits_.bytes_per_window) + " bytes in " +
            SecondsText(std::chrono::duration<double>(limits_.window).count()) +
            "; the rest of it is left out of the log and counted");
      }
      left_out_ += bytes;
    }
    line_.clear();
    line_overflow_ = 0;
  }
}

void OutputRelay::EndWindowIfOver(std::chrono::steady_clock::time_point now) {
  if (now - window_start_ < limits_.window) return;
  EndWindow();
  window_start_ = now;
}

void OutputRelay::EndWindow() {
  if (left_out_ > 0) Say("kernel output: " + std::to_string(left_out_) + " bytes more were left out");
  said_ = 0;
  left_out_ = 0;
}

void OutputRelay::Say(const std::string& line) {
  if (sink_) sink_(line);
}

}  // namespace tunefleet::agent

// The worker's standard output into the agent's log, bounded. A kernel's printf writes there (PoCL and the GPU
// drivers print to the process's stdout); one printf per work-item of a tuning job is millions of lines, which
// would fill a phone's storage or the journal. Each line is logged as "kernel output: LINE" (control characters
// escaped, cut at `line_bytes`) up to `bytes_per_window` bytes per `window`; past that, one line says so, the rest of
// the window is left out, and its bytes are counted in one line when the window ends, or when the relay stops.
//
// Ownership: owns the pipe and the thread that reads it; the destructor stops the thread after reading what is in
// the pipe by then. The supervisor keeps one relay for all the workers it starts (each gets write_fd() as its
// stdout).
// Thread safety: write_fd() from any thread, EndLine() from one thread at a time; the sink is called from the
// relay's thread only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/owned_fd.h"
#include "common/status.h"

namespace tunefleet::agent {

class OutputRelay {
 public:
  struct Limits {
    size_t bytes_per_window = 16 * 1024;
    std::chrono::milliseconds window{std::chrono::minutes(1)};
    size_t line_bytes = 1024;
  };
  // Receives each line to log, "kernel output: ..." included.
  using Sink = std::function<void(const std::string& line)>;

  static Result<std::unique_ptr<OutputRelay>> Start(Limits limits, Sink sink);
  ~OutputRelay();
  OutputRelay(const OutputRelay&) = delete;
  OutputRelay& operator=(const OutputRelay&) = delete;

  // The pipe's write end (close-on-exec): what a worker gets as its stdout.
  int write_fd() const { return write_.get(); }

  // Ends the line a worker left unended (killed mid-printf): called once the worker is reaped, when all it wrote is
  // in the pipe. Returns when the relay has read that and said the line, so that the next worker's first line does
  // not continue it (or after a second, should the relay's thread be stuck in its sink).
  void EndLine();

 private:
  OutputRelay(Limits limits, Sink sink) : limits_(limits), sink_(std::move(sink)) {}
  void Loop();
  // Reads what the pipe holds now; false at its end or on an error.
  bool ReadAvailable();
  void Take(const char* data, size_t size);
  void Say(const std::string& line);
  // Ends the window when `now` is past it: says what was left out in it, and starts the next.
  void EndWindowIfOver(std::chrono::steady_clock::time_point now);
  void EndWindow();
  // Reads the control pipe: a 0 byte is the stop (true), a 1 an EndLine, answered at once.
  bool ReadControl();

  const Limits limits_;
  const Sink sink_;
  OwnedFd read_, write_;
  OwnedFd stop_read_, stop_write_;  // the control pipe: the destructor writes 0, EndLine 1
  std::thread thread_;
  std::mutex ended_mu_;
  std::condition_variable ended_cv_;
  uint64_t ends_asked_ = 0, ends_done_ = 0;  // EndLine calls, and those the relay has answered (under ended_mu_)
  // The relay thread's own, below.
  std::string line_;          // a line begun and not yet ended
  size_t line_overflow_ = 0;  // bytes of that line past line_bytes, not kept
  std::chrono::steady_clock::time_point window_start_;
  size_t said_ = 0;  // bytes of lines said in this window
  size_t left_out_ = 0;
};

}  // namespace tunefleet::agent

#include "tuner/stop_signals.h"

#include <pthread.h>
#include <signal.h>

#include <ctime>
#include <utility>

#include <spdlog/spdlog.h>

namespace tunefleet {
namespace {

// SIGHUP only where it is not ignored: `nohup tunefleet tune ... &` asks for the run to outlive the terminal, and a
// blocked signal is queued even when ignored, so taking it would stop the run at logout. (SIGINT is taken even when
// ignored, as a shell script's `tune & ... kill -INT $!` sends it to a command whose SIGINT the shell ignores.)
sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  struct sigaction hup {};
  if (sigaction(SIGHUP, nullptr, &hup) != 0 || hup.sa_handler != SIG_IGN) sigaddset(&set, SIGHUP);
  return set;
}

const char* Name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "";
}

}  // namespace

StopOnSignals::StopOnSignals(std::chrono::milliseconds repeat_grace, std::string stopping)
    : repeat_grace_(repeat_grace), stopping_(std::move(stopping)), signals_(StopSignals()) {
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  // A closed pipe on standard output (`tune | head`) killed the command by SIGPIPE, its session left 'running' and
  // its lease held; ignored, the write fails (EPIPE) and the command says so at its end, as for any output error.
  signal(SIGPIPE, SIG_IGN);
  waiter_ = std::thread([this] { Wait(); });
}

StopOnSignals::~StopOnSignals() { Finish(); }

void StopOnSignals::Finish() {
  done_ = true;
  if (waiter_.joinable()) waiter_.join();
}

const char* StopOnSignals::signal_name() const { return Name(first_signal_.load()); }

void StopOnSignals::Wait() {
  // Polls `done_` between waits; 100 ms bounds how long the destructor waits.
  const timespec poll{0, 100 * 1000 * 1000};
  std::chrono::steady_clock::time_point first;
  while (!done_) {
    const int sig = sigtimedwait(&signals_, nullptr, &poll);
    if (sig < 0) continue;  // EAGAIN (timeout) or EINTR
    const auto now = std::chrono::steady_clock::now();
    if (first_signal_.load() == 0) {
      first = now;
      first_signal_ = sig;
      spdlog::warn("{} received: stopping ({}); a second one after {} ms kills at once", Name(sig), stopping_,
                   repeat_grace_.count());
      source_.request_stop();
      continue;
    }
    if (now - first < repeat_grace_) continue;  // the same request delivered twice
    spdlog::warn("second {}: killed without cleaning up (a lease it holds expires after its ttl, and its session "
                 "stays 'running' until the next run on the log marks it 'killed')",
                 Name(sig));
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    raise(sig);
  }
}

}  // namespace tunefleet

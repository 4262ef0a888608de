// The agent's session with the tracker: one long-lived AgentSession stream. Registers (key, device, version,
// token), heartbeats every few seconds, runs jobs one at a time through a JobRunner and sends their results.
// When the tracker is unreachable or the stream breaks, it reconnects with exponential backoff (0.5 s doubling to
// a 10 s cap, reset after a successful registration), saying why; a failure the same as the last is said once
// more and then every 5 minutes. A failed job is just a result; it never ends the session. When the runner says it
// can take no job (JobRunner::Unavailable: the disk is full), the session leaves the tracker and joins it again
// once the runner says so no more.
//
// A CancelJob for the running job (its tuner went away) aborts it at once: a reader thread takes messages off the
// stream while the job runs, and the aborted job's result is still sent (the tracker ignores it).
//
// Thread safety: Run() on one thread (it also runs the jobs, so JobRunner::Run sees a single thread; AbortJob comes
// from the reader thread); Stop() from any thread. Each connection is a TrackerConnection (tracker_connection.h:
// its threads and locks).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "agent/worker_supervisor.h"
#include "common/status.h"
#include "proto/tunefleet.pb.h"

namespace tunefleet::agent {

class TrackerConnection;

struct SessionOptions {
  std::string tracker;  // host:port
  std::string key;
  std::string token;
  std::string agent_version;
  std::string tls_root_certs;  // PEM; non-empty: dial with TLS, verifying the tracker against these roots
  std::chrono::milliseconds heartbeat_interval{3000};
  std::chrono::milliseconds register_timeout{15000};  // a tracker that does not answer RegisterAgent in time
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{10000};
  // While the runner is unavailable (a full disk), how often the session looks whether it is no longer.
  std::chrono::milliseconds room_check_interval{10000};
};

class Session {
 public:
  // `runner` must outlive the session.
  Session(SessionOptions options, proto::DeviceInfo device, JobRunner* runner);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Serves until Stop() (returns OK) or until the tracker rejects the agent's credentials (returns
  // PermissionDenied with the tracker's message). Every other failure is retried.
  Status Run();

  // Ends Run() soon: a registered session tells the tracker it is leaving (so that the tracker logs it as left,
  // not lost) and closes its stream, cancelling it when the tracker does not close within a few seconds; an
  // unregistered one is cancelled at once; a backoff wait ends. Thread-safe, idempotent.
  void Stop();

  uint64_t jobs_done() const { return jobs_done_; }

 private:
  // One connection: connect, register, serve. Sets *registered when the tracker accepted the registration, and
  // *left_for_room when the agent left it because its runner became unavailable (the connection said so).
  Status Connect(bool* registered, bool* left_for_room);
  // While the runner is unavailable, waits until it is not; `say`: says so first (unless the connection just did).
  enum class Room { kAvailable, kAgain, kStopped };  // never unavailable; available again; Stop() came meanwhile
  Room WaitForRoom(bool say);

  const SessionOptions options_;
  const proto::DeviceInfo device_;
  JobRunner* const runner_;
  std::atomic<uint64_t> jobs_done_{0};

  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;                  // guarded by mu_
  TrackerConnection* active_ = nullptr;    // guarded by mu_: the connection that serves, told to leave on Stop()
};

}  // namespace tunefleet::agent

// TrackerConnection: one connection of an agent's Session to the tracker — the AgentSession stream, a heartbeat
// thread, a reader thread, and the job loop on the thread that calls Serve(). The Session makes a new one for each
// (re)connection; see session.h for the protocol.
//
// Threads: Serve() registers, then starts the heartbeat thread (heartbeats once registered; gives up on a tracker
// that never answers the registration; while leaving, cancels the stream when the tracker has not closed it in 3 s)
// and the reader thread (takes the tracker's messages off the stream while a job runs, so that a CancelJob for the
// running job aborts it at once; queues everything else), and runs jobs on the calling thread. Both threads are
// joined before Serve() returns. Writes (results and heartbeats) are serialised by write_mu_.
// Lock order: inbox_mu_, then job_mu_. A job leaves the inbox and becomes running under both, so a cancel always
// finds its job either queued or running (or already answered).
//
// Thread safety: Serve() once, on one thread; Stop() from any thread, any time.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "agent/session.h"
#include "agent/worker_supervisor.h"
#include "common/status.h"
#include "proto/tunefleet.grpc.pb.h"

namespace tunefleet::agent {

class TrackerConnection {
 public:
  // Every pointer and reference must outlive the connection; `jobs_done` counts the jobs answered
  // with a result (not those answered not_measured: stopped on the tracker's word, or given back).
  TrackerConnection(const SessionOptions& options, const proto::DeviceInfo& device, JobRunner* runner,
                    std::atomic<uint64_t>* jobs_done);
  TrackerConnection(const TrackerConnection&) = delete;
  TrackerConnection& operator=(const TrackerConnection&) = delete;
  ~TrackerConnection();

  // Connects, registers and serves jobs until the stream ends or Stop() has it leave. Sets *registered when the
  // tracker accepted the registration. Returns PermissionDenied when the tracker rejected the agent's credentials,
  // Unavailable with the reason otherwise (also after a Stop()).
  Status Serve(bool* registered);
  // After Serve(), on its thread: whether the connection ended because the agent left for want of room (it said so).
  bool left_for_room() const { return !leave_reason_.empty(); }

  // Leaves: once serving, says Leaving and closes the stream (cancelling it when the tracker does not close it
  // within 3 s); before that, cancels the call. Idempotent.
  void Stop();

 private:
  using Stream = grpc::ClientReaderWriter<proto::AgentMessage, proto::TrackerMessage>;

  void HeartbeatLoop();
  void ReadLoop();
  // Ask the loops to leave (under phase_mu_, once serving), and start the leave timer.
  void LeaveLocked();
  // The leave timer's thread: cancels the call when the stream is not closed by leave_by_. A thread of its own, one
  // that never writes: the heartbeat and job threads may be blocked in a Write to a tracker that stopped reading.
  void CancelUnlessClosedInTime();
  // Ends the heartbeat and leave-timer threads (hb_stop_) and joins them.
  void StopTimers();
  // The next message for the job loop, false when leaving or the stream ended; *skip: a job cancelled while queued.
  bool NextMessage(proto::TrackerMessage* message, bool* skip);
  // Runs (or, `skip`, answers without running) a job and sends its result; false when the connection is done.
  bool AnswerJob(const proto::Job& job, bool skip);
  // After the job loop: says Leaving when it left on purpose; returns whether the stream is still good to close.
  // *said_last: this side was closed with Leaving (even by a write that failed): Finish must not close it again.
  bool SayGoodbye(bool ok, bool* said_last);
  Status Finish(bool ok, bool said_last);

  const SessionOptions& options_;
  const proto::DeviceInfo& device_;
  JobRunner* const runner_;
  std::atomic<uint64_t>* const jobs_done_;

  grpc::ClientContext context_;  // before stream_: the stream uses it until destroyed
  std::unique_ptr<proto::Tracker::Stub> stub_;
  std::unique_ptr<Stream> stream_;
  std::mutex write_mu_;  // one writer at a time: results (the job loop) and heartbeats
  std::atomic<bool> registered_{false};

  std::mutex phase_mu_;
  bool serving_ = false;         // guarded by phase_mu_: the loops run and LeaveLocked() reaches them
  bool stop_requested_ = false;  // guarded by phase_mu_
  std::string leave_reason_;     // Leaving's reason (the runner is unavailable); the job loop's thread only

  std::mutex hb_mu_;
  std::condition_variable hb_cv_;
  bool hb_stop_ = false;                                     // guarded by hb_mu_
  std::optional<std::chrono::steady_clock::time_point> leave_by_;  // guarded by hb_mu_

  std::mutex inbox_mu_;
  std::condition_variable inbox_cv_;
  std::deque<proto::TrackerMessage> inbox_;  // guarded by inbox_mu_
  bool inbox_done_ = false;                  // guarded by inbox_mu_: the reader has ended
  bool leaving_ = false;                     // guarded by inbox_mu_: Stop() was called while serving

  std::mutex job_mu_;                 // orders aborts with the start and end of each job
  std::optional<uint64_t> running_;   // guarded by job_mu_
  std::set<uint64_t> cancelled_;      // queued jobs cancelled before they started; guarded by job_mu_

  std::thread heartbeats_;
  std::thread reader_;
  std::thread leave_timer_;  // started by LeaveLocked
};

}  // namespace tunefleet::agent

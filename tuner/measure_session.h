// MeasureSession: the tuner's side of a lease on the tracker. Acquires devices, keeps the lease alive,
// sends batches and hands back one result per job. A job whose device was lost mid-batch is not a result:
// it is sent again (on another device of the lease, or on a re-acquired lease once a device of the key
// returns), waiting at most `device_wait` seconds for a device, so no job is recorded as a failure
// because of the loss.
// A stop request (SessionOptions::stop) cancels the tracker calls in flight at once, from whichever thread
// requests it: Open and Measure then return Cancelled-like Unavailable errors and interrupted() is true; the
// results already handed to on_result stay handed; the lease is still released by Release() / the destructor.
// Thread safety: used by one thread (the keep-alive runs on its own thread inside).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/tunefleet.pb.h"
#include "tracker/client.h"
#include "tuner/lease_note.h"

namespace tunefleet {

class LeaseKeepAlive;

struct SessionOptions {
  std::string tracker;       // host:port
  std::string key;
  std::string token;
  uint32_t devices = 1;      // devices wanted
  int32_t priority = 0;
  double wait = 60;          // seconds to wait for a device at the start
  double device_wait = 300;  // seconds to wait for a device to come back after a loss
  std::string device_wait_option = "--device-wait";  // the option that sets it, named when the wait runs out
  double connect_timeout = 5;
  std::string tls_ca_file;   // PEM roots; non-empty: connect to the tracker with TLS
  std::string client;        // shown in `tunefleet query`
  // Non-empty (`tune`: the log's path): the lease is noted in PREFIX.lease.PID while held (tuner/lease_note.h), and
  // Open first releases the leases noted by runs of this log that were killed, on this host or another.
  std::string lease_note;
  std::stop_token stop;      // a stop request abandons what is in flight (see above); none by default
  // Called with the devices of every lease the session gets, before a job is sent to them: the first lease (in Open)
  // and each one taken again after the devices were lost (in Measure), which may hold another device model than the
  // first. An error ends Open or Measure with it, the lease released. None by default.
  std::function<Status(const std::vector<proto::LeasedDevice>&)> on_lease;
};

// What a TrackerClient needs of a session's options (its token, connect timeout and TLS roots).
TrackerClientOptions ClientOptionsFor(const SessionOptions& opts);

class MeasureSession {
 public:
  static Result<std::unique_ptr<MeasureSession>> Open(const SessionOptions& opts);
  ~MeasureSession();
  MeasureSession(const MeasureSession&) = delete;
  MeasureSession& operator=(const MeasureSession&) = delete;

  // The devices of the current lease, or of the last one once it was released (at least one).
  const std::vector<proto::LeasedDevice>& devices() const { return devices_; }

  // Measures every program; `on_result(i, result, device_fingerprint)` is called once per job i, as results
  // arrive. Fails only when no device could be had within device_wait, the tracker is gone for good, or
  // opts.on_lease refused a lease taken again.
  Status Measure(const std::vector<const proto::KernelProgram*>& programs,
                 const std::function<Status(size_t, const proto::MeasureResult&, const std::string&)>& on_result);

  // Frees the devices now (also done by the destructor). `tracker_silent`: the tracker was found not to answer, as
  // the line said next tells; a release it does not take is then not said on a line of its own.
  void Release(bool tracker_silent = false);

  // True once a stop was requested.
  bool interrupted() const { return opts_.stop.stop_requested(); }

 private:
  explicit MeasureSession(const SessionOptions& opts);
  // `queued_for`: seconds already waited for the key in earlier calls (TrackerClient::Acquire). `count`: devices
  // asked; 0 asks --devices. `min_count`: the fewest the lease is granted with.
  Status Acquire(double wait, double queued_for = 0, uint32_t count = 0, uint32_t min_count = 1);
  // Why the lease holds fewer devices than --devices asked, from the tracker's summary of the key.
  std::string WhyFewerDevices();
  // Hands the lease's devices to opts_.on_lease; on its error the lease is released.
  Status Adopt();
  // Why no device of the key is had, from the tracker's summary: no agent of the key registered, or every one leased
  // (by whom, and the runs queued ahead). At the start, `none_registered` is the tracker's answer; mid-run (nullopt)
  // the summary decides, and a key with a free agent, or a tracker that does not answer, gives "".
  // `waited`: seconds this run has waited already (the tracker serves an equal priority by it): a run queued later is
  // not ahead of it.
  std::string KeyState(std::optional<bool> none_registered, double waited) const;
  // Why the tracker does not answer now (its summary call cannot reach it, or is not answered in time), in the
  // words of the connection's failure; nullopt when it answers.
  std::optional<std::string> TrackerSilence() const;
  // The line said before a wait of `wait` seconds for a device: KeyState and the wait.
  std::string WhyWaiting(double wait, std::optional<bool> none_registered) const;
  // Releases the leases noted beside opts_.lease_note by killed runs of this host on this tracker; drops the notes.
  void ReleaseDeadRunLeases();
  // Says, once per device lost, that the lease goes on with the devices it still holds (none: said elsewhere).
  void SayLeaseShrank();

  SessionOptions opts_;
  std::unique_ptr<TrackerClient> client_;
  // Cancels client_'s calls on a stop request; declared after client_ so that it goes first.
  std::optional<std::stop_callback<std::function<void()>>> on_stop_;
  std::unique_ptr<LeaseKeepAlive> keep_alive_;
  std::string lease_id_;
  std::optional<LeaseNote> note_;  // while a lease is held, when SessionOptions::lease_note asks for one
  std::vector<proto::LeasedDevice> devices_;
  std::set<std::string> lost_agents_;  // agents of devices_ whose jobs came back lost
  size_t said_left_ = 0;  // the devices the lease goes on with: as granted, then as SayLeaseShrank last said
  // Set when a lease taken again after a loss brought fewer devices than asked (agents coming back one by one): the
  // count asked, asked again after a later loss rather than the fewer it went on with.
  size_t short_of_ = 0;
  uint64_t next_job_id_ = 1;
};

}  // namespace tunefleet

// TrackerClient: the tuner's side of the tracker (Acquire / Measure / Renew / Release / Summary).
// Every gRPC failure comes back as a Status whose text names the tracker and the call.
//
// Thread safety: a TrackerClient may be used from several threads at once (gRPC channels and stubs are
// thread-safe); e.g. a LeaseKeepAlive renews while another thread runs Measure.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/tunefleet.grpc.pb.h"

namespace tunefleet {

struct Lease {
  std::string lease_id;
  std::vector<proto::LeasedDevice> devices;
  double ttl = 0;  // seconds; renew before it runs out
};

struct TrackerClientOptions {
  std::string token;           // sent with every call; empty when the tracker needs none
  double connect_timeout = 5;  // seconds
  double call_timeout = 30;    // seconds, for Renew / Release / Summary
  std::string tls_ca_file;     // PEM roots; non-empty: connect with TLS
  int max_message_mb = 64;
  // Gives up at the first failed connection attempt (nothing listens, a refused handshake) instead of retrying
  // until connect_timeout: for a one-shot question such as `tunefleet query`.
  bool give_up_on_first_failure = false;
  // A stop request ends the wait for the connection at once (Ctrl-C while the tracker is down took up to
  // connect_timeout): Connect then fails as Unavailable "... cancelled".
  std::stop_token stop;
};

class TrackerClient {
 public:
  // Connects to `target` ("host:port"). Fails within `connect_timeout` seconds with
  // "cannot reach tracker at host:port: ..." when nothing answers there.
  static Result<std::unique_ptr<TrackerClient>> Connect(const std::string& target, const std::string& token,
                                                        double connect_timeout);
  static Result<std::unique_ptr<TrackerClient>> Connect(const std::string& target, const TrackerClientOptions& options);

  TrackerClient(const TrackerClient&) = delete;
  TrackerClient& operator=(const TrackerClient&) = delete;

  // Waits up to `wait_s` seconds for `count` agents of `key` (at least `min_count`, 0 = 1). `queued_for_s`: how
  // long this client has already waited for the key in earlier calls, so that it keeps its place among equal
  // priorities. NotFound when the key has no agent at all, DeadlineExceeded when all of them stayed busy.
  Result<Lease> Acquire(const std::string& key, uint32_t count, uint32_t min_count, int32_t priority, double wait_s,
                        const std::string& client, double queued_for_s = 0);
  // Sends the batch on the lease and calls `on_event` (on the calling thread) once per job as its event
  // arrives. Blocks until every job has its event, or the call fails.
  Status Measure(const std::string& lease_id, std::vector<proto::MeasureJob> jobs,
                 const std::function<void(const proto::MeasureEvent&)>& on_event);
  // The number of agents the lease still holds (0 from a tracker older than that field). `timeout_s` > 0 bounds the
  // call below call_timeout: a renewal that answers after the next one is due is of no use, and a tuner that ends
  // need not wait long to give a lease back that runs out by itself, or to ask whether the tracker answers at all.
  Result<uint32_t> Renew(const Lease& lease, double timeout_s = 0);
  Status Release(const Lease& lease, double timeout_s = 0);
  Result<proto::SummaryReply> Summary(double timeout_s = 0);

  // For a tuner that was told to stop: cancels the Acquire, Measure and Renew calls in flight (a Measure returns
  // after the events it already delivered) and makes later ones fail at once, both with Unavailable
  // "... cancelled". Release and Summary keep working, so the lease can still be released.
  // Safe to call from any thread, more than once.
  void CancelCalls();
  bool cancelled() const;

 private:
  // An Acquire, Measure or Renew in flight, registered so that CancelCalls() can reach its context.
  class CancellableCall;

  TrackerClient(std::string target, TrackerClientOptions options, std::shared_ptr<grpc::Channel> channel);
  Status FromGrpc(const grpc::Status& s, const char* call) const;

  const std::string target_;
  const TrackerClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::Tracker::Stub> stub_;
  mutable std::mutex mu_;
  bool cancelled_ = false;                   // guarded by mu_
  std::set<grpc::ClientContext*> in_flight_;  // guarded by mu_; contexts of running Acquire/Measure/Renew calls
};

}  // namespace tunefleet

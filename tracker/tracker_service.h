// TrackerService: the gRPC service `Tracker` (proto/tunefleet.proto), synchronous API.
//
// Why the sync API: every call of this service is a long wait on tracker state (an agent's lifetime, an
// Acquire queued up to `wait` seconds, a Measure batch in flight), which maps directly onto a handler
// thread blocked on a condition variable, with lifetimes scoped to the handler function. A lab's fleet is
// tens of agents, so a thread (two for an agent) per open stream is cheap, and there is no delete-this
// lifetime to get wrong.
//
// Owns a housekeeping thread that drops silent agents, expires leases and cancels agent streams that do not register
// in time. Thread safety: all handlers run concurrently on gRPC's threads; shared state lives in TrackerState and
// CallDeadlines.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "proto/tunefleet.grpc.pb.h"
#include "tracker/agent_session.h"
#include "tracker/auth.h"
#include "tracker/call_deadlines.h"
#include "tracker/tracker_state.h"

namespace tunefleet::tracker {

struct ServiceOptions {
  StateOptions state;
  SessionOptions session;
  std::string token;  // empty: no token required
};

class TrackerService final : public proto::Tracker::Service {
 public:
  explicit TrackerService(const ServiceOptions& options);
  ~TrackerService() override;  // stops housekeeping; call Stop() first to end open streams
  TrackerService(const TrackerService&) = delete;
  TrackerService& operator=(const TrackerService&) = delete;

  // Ends every open stream and waiting Acquire (before grpc::Server::Shutdown).
  void Stop();
  TrackerState& state() { return state_; }

  grpc::Status AgentSession(grpc::ServerContext* ctx,
                            grpc::ServerReaderWriter<proto::TrackerMessage, proto::AgentMessage>* stream) override;
  grpc::Status Acquire(grpc::ServerContext* ctx, const proto::AcquireRequest* req, proto::AcquireReply* reply) override;
  grpc::Status Measure(grpc::ServerContext* ctx, const proto::MeasureBatch* batch,
                       grpc::ServerWriter<proto::MeasureEvent>* writer) override;
  grpc::Status Renew(grpc::ServerContext* ctx, const proto::RenewRequest* req, proto::RenewReply* reply) override;
  grpc::Status Release(grpc::ServerContext* ctx, const proto::ReleaseRequest* req, proto::ReleaseReply* reply) override;
  grpc::Status Summary(grpc::ServerContext* ctx, const proto::SummaryRequest* req, proto::SummaryReply* reply) override;

 private:
  void Housekeep();

  TokenCheck auth_;
  TrackerState state_;
  CallDeadlines deadlines_;  // agent streams waiting for their RegisterAgent
  WarningThrottle unregistered_{"agent sessions dropped without a RegisterAgent in time"};
  WarningThrottle malformed_{"agent sessions dropped for their first message"};
  const SessionDeps session_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread housekeeper_;
};

}  // namespace tunefleet::tracker

#include "tracker/client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "common/grpc_keepalive.h"
#include "common/grpc_reason.h"
#include "common/pem_check.h"
#include "common/seconds.h"
#include "common/tls_hint.h"

namespace tunefleet {
namespace {

// At most a year on: a longer (or NaN) wait would overflow the clock's arithmetic.
std::chrono::system_clock::time_point After(double seconds) {
  const double ms = std::min(std::max(seconds, 0.0), kOneYearSeconds) * 1000;
  return std::chrono::system_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(ms));
}

// Why `channel` did not connect: one fail-fast call reports the channel's last connection error, in gRPC's words
// ("failed to connect to all addresses; last error: ... Ssl handshake failed: ..."), said as GrpcReason shortens
// them; empty when it does not say.
std::string WhyNoConnection(const std::shared_ptr<grpc::Channel>& channel) {
  // Still connecting (a peer that took the TCP connection and never answered, a stopped tracker, or a dropped SYN):
  // gRPC has no reason yet, and asking for one for a second ran a second past --timeout. A brief ask still catches
  // an attempt that was about to fail (a refused one, retried).
  const bool connecting = channel->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_CONNECTING;
  grpc::ClientContext ctx;
  ctx.set_deadline(After(connecting ? 0.2 : 1.0));
  proto::SummaryRequest req;
  proto::SummaryReply reply;
  const grpc::Status s = proto::Tracker::NewStub(channel)->Summary(&ctx, req, &reply);
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) return GrpcReason(s.error_message());
  return connecting ? "no answer from the peer yet" : "";
}

enum class Connection { kReady, kFailed, kTimedOut, kStopped };

// Waits until `channel` is ready or `deadline` passes; with `give_up_on_failure`, also stops at the first failed
// connection attempt (gRPC would retry it with backoff until the deadline).
// Waits in slices of at most 100 ms, so that a stop request (`stop`) ends the wait at once (kStopped).
Connection WaitForChannel(grpc::Channel& channel, std::chrono::system_clock::time_point deadline,
                          bool give_up_on_failure, const std::stop_token& stop) {
  for (grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);;) {
    if (state == GRPC_CHANNEL_READY) return Connection::kReady;
    if (give_up_on_failure && (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN)) {
      return Connection::kFailed;
    }
    if (stop.stop_requested()) return Connection::kStopped;
    const auto now = std::chrono::system_clock::now();
    if (now >= deadline) return Connection::kTimedOut;
    (void)channel.WaitForStateChange(state, std::min(deadline, now + std::chrono::milliseconds(100)));
    state = channel.GetState(/*try_to_connect=*/true);
  }
}

}  // namespace

// Registers `ctx` for the lifetime of one call; ok() is false when the client was cancelled before the call.
class TrackerClient::CancellableCall {
 public:
  CancellableCall(TrackerClient* client, grpc::ClientContext* ctx) : client_(client), ctx_(ctx) {
    std::lock_guard<std::mutex> lock(client_->mu_);
    ok_ = !client_->cancelled_;
    if (ok_) client_->in_flight_.insert(ctx_);
  }
  ~CancellableCall() {
    std::lock_guard<std::mutex> lock(client_->mu_);
    client_->in_flight_.erase(ctx_);
  }
  CancellableCall(const CancellableCall&) = delete;
  CancellableCall& operator=(const CancellableCall&) = delete;
  bool ok() const { return ok_; }

 private:
  TrackerClient* const client_;
  grpc::ClientContext* const ctx_;
  bool ok_ = false;
};

TrackerClient::TrackerClient(std::string target, TrackerClientOptions options, std::shared_ptr<grpc::Channel> channel)
    : target_(std::move(target)),
      options_(std::move(options)),
      channel_(std::move(channel)),
      stub_(proto::Tracker::NewStub(channel_)) {}

Result<std::unique_ptr<TrackerClient>> TrackerClient::Connect(const std::string& target, const std::string& token,
                                                              double connect_timeout) {
  TrackerClientOptions o;
  o.token = token;
  o.connect_timeout = connect_timeout;
  return Connect(target, o);
}

Result<std::unique_ptr<TrackerClient>> TrackerClient::Connect(const std::string& target,
                                                              const TrackerClientOptions& options) {
  if (target.empty() || target.find(':') == std::string::npos) {
    return Status::InvalidArgument("tracker address '" + target + "' is not host:port");
  }
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  std::string root_pem;
  if (!options.tls_ca_file.empty()) {
    TF_ASSIGN_OR_RETURN(root_pem, ReadPemCertificates(options.tls_ca_file));
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = root_pem;
    creds = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_mb * 1024 * 1024);
  args.SetMaxSendMessageSize(options.max_message_mb * 1024 * 1024);
  SetClientKeepalive(&args);
  SetClientReconnect(&args);
  auto channel = grpc::CreateCustomChannel(target, creds, args);
  const Connection connection =
      WaitForChannel(*channel, After(options.connect_timeout), options.give_up_on_first_failure, options.stop);
  if (connection == Connection::kStopped) return Status::Unavailable("tracker " + target + ": connect: cancelled");
  if (connection != Connection::kReady) {
    std::string why = WhyNoConnection(channel);
    if (const std::string hint = TlsConnectionHint(why, root_pem, std::time(nullptr)); !hint.empty()) {
      why += "; " + hint;
    }
    return Status::Unavailable("cannot reach tracker at " + target + ": " +
                               (connection == Connection::kFailed
                                    ? "the connection failed"
                                    : "no connection within " + SecondsText(options.connect_timeout)) +
                               (why.empty() ? "" : " (" + why + ")"));
  }
  return std::unique_ptr<TrackerClient>(new TrackerClient(target, options, std::move(channel)));
}

Status TrackerClient::FromGrpc(const grpc::Status& s, const char* call) const {
  if (s.ok()) return Status::OK();
  const std::string msg =
      std::string("tracker ") + target_ + ": " + call + ": " + ExplainKeepalive(GrpcReason(s.error_message()));
  switch (s.error_code()) {
    case grpc::StatusCode::NOT_FOUND: return Status::NotFound(msg);
    case grpc::StatusCode::INVALID_ARGUMENT: return Status::InvalidArgument(msg);
    case grpc::StatusCode::DEADLINE_EXCEEDED: return Status::DeadlineExceeded(msg);
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED: return Status::PermissionDenied(msg);
    case grpc::StatusCode::RESOURCE_EXHAUSTED:  // a message over a size limit: sending it again cannot help
      return Status::InvalidArgument(msg + " (a request must fit the tracker's --max-message-mb and the tuner's " +
                                     std::to_string(options_.max_message_mb) +
                                     " MiB; tune's --batch sets how many programs one carries)");
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::CANCELLED: return Status::Unavailable(msg);
    default: return Status::Internal(msg);
  }
}

Result<Lease> TrackerClient::Acquire(const std::string& key, uint32_t count, uint32_t min_count, int32_t priority,
                                     double wait_s, const std::string& client, double queued_for_s) {
  proto::AcquireRequest req;
  req.set_key(key);
  req.set_count(count);
  req.set_min_count(min_count);
  req.set_priority(priority);
  req.set_wait(wait_s);
  req.set_client(client);
  req.set_token(options_.token);
  req.set_queued_for(queued_for_s);
  proto::AcquireReply reply;
  grpc::ClientContext ctx;
  // The tracker answers by itself after `wait_s`; the margin covers the network.
  ctx.set_deadline(After(wait_s + options_.call_timeout));
  CancellableCall call(this, &ctx);
  if (!call.ok()) return Status::Unavailable("tracker " + target_ + ": acquire: cancelled");
  TF_RETURN_IF_ERROR(FromGrpc(stub_->Acquire(&ctx, req, &reply), "acquire"));
  Lease lease;
  lease.lease_id = reply.lease_id();
  lease.devices.assign(reply.devices().begin(), reply.devices().end());
  // The tracker's --lease-ttl is at most a day; a reply beyond it (or NaN) would overflow the keep-alive's period.
  lease.ttl = std::isfinite(reply.ttl()) ? std::clamp(reply.ttl(), 0.0, kOneDaySeconds) : 0.0;
  return lease;
}

Status TrackerClient::Measure(const std::string& lease_id, std::vector<proto::MeasureJob> jobs,
                              const std::function<void(const proto::MeasureEvent&)>& on_event) {
  proto::MeasureBatch batch;
  batch.set_lease_id(lease_id);
  batch.set_token(options_.token);
  for (auto& j : jobs) *batch.add_jobs() = std::move(j);
  grpc::ClientContext ctx;  // no deadline: each job has its own timeout on the agent
  CancellableCall call(this, &ctx);
  if (!call.ok()) return Status::Unavailable("tracker " + target_ + ": measure: cancelled");
  auto reader = stub_->Measure(&ctx, batch);
  proto::MeasureEvent ev;
  int seen = 0;
  while (reader->Read(&ev)) {
    ++seen;
    on_event(ev);
  }
  TF_RETURN_IF_ERROR(FromGrpc(reader->Finish(), "measure"));
  if (seen != batch.jobs_size()) {
    return Status::Internal("tracker " + target_ + ": measure: " + std::to_string(seen) + " events for " +
                            std::to_string(batch.jobs_size()) + " jobs");
  }
  return Status::OK();
}

Result<uint32_t> TrackerClient::Renew(const Lease& lease, double timeout_s) {
  proto::RenewRequest req;
  req.set_lease_id(lease.lease_id);
  req.set_token(options_.token);
  proto::RenewReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(After(timeout_s > 0 ? std::min(timeout_s, options_.call_timeout) : options_.call_timeout));
  // Cancelled by a stop too: a tuner that stops releases its lease next, and a renewal on a stalled link held its
  // Ctrl-C for up to the renewal's period (10 s).
  CancellableCall call(this, &ctx);
  if (!call.ok()) return Status::Unavailable("tracker " + target_ + ": renew: cancelled");
  TF_RETURN_IF_ERROR(FromGrpc(stub_->Renew(&ctx, req, &reply), "renew"));
  return reply.devices();
}

Status TrackerClient::Release(const Lease& lease, double timeout_s) {
  proto::ReleaseRequest req;
  req.set_lease_id(lease.lease_id);
  req.set_token(options_.token);
  proto::ReleaseReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(After(timeout_s > 0 ? std::min(timeout_s, options_.call_timeout) : options_.call_timeout));
  return FromGrpc(stub_->Release(&ctx, req, &reply), "release");
}

void TrackerClient::CancelCalls() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  for (grpc::ClientContext* ctx : in_flight_) ctx->TryCancel();
}

bool TrackerClient::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

Result<proto::SummaryReply> TrackerClient::Summary(double timeout_s) {
  proto::SummaryRequest req;
  req.set_token(options_.token);
  proto::SummaryReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(After(timeout_s > 0 ? std::min(timeout_s, options_.call_timeout) : options_.call_timeout));
  TF_RETURN_IF_ERROR(FromGrpc(stub_->Summary(&ctx, req, &reply), "summary"));
  return reply;
}

}  // namespace tunefleet

#include "tracker/tracker_service.h"

#include "common/device_key.h"
#include "tracker/grpc_status.h"
#include "tracker/measure_handler.h"

namespace tunefleet::tracker {
namespace {

// How often silent agents and unrenewed leases are looked for; bounds how late a timeout is noticed.
constexpr auto kHousekeepingPeriod = std::chrono::milliseconds(250);
// A housekeeping wake-up this much later than the last one means the tracker itself did not run meanwhile.
constexpr auto kStallBound = std::chrono::seconds(5);

}  // namespace

TrackerService::TrackerService(const ServiceOptions& options)
    : auth_(options.token),
      state_(options.state),
      session_{state_, auth_, deadlines_, options.session, unregistered_, malformed_},
      housekeeper_([this] { Housekeep(); }) {}

TrackerService::~TrackerService() {
  Stop();
  housekeeper_.join();
}

void TrackerService::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  state_.Stop();
  deadlines_.CancelOverdue(TimePoint::max());
}

void TrackerService::Housekeep() {
  std::unique_lock<std::mutex> lock(mu_);
  TimePoint last = Clock::now();
  while (!stop_) {
    stop_cv_.wait_for(lock, kHousekeepingPeriod, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    const TimePoint now = Clock::now();
    // Woken this late, the whole process stalled: a soak on a loaded host dropped every agent at once.
    if (now - last > kStallBound) state_.ForgiveStall(now, now - last);
    last = now;
    state_.Tick(now);
    deadlines_.CancelOverdue(Clock::now());
    // Peers' floods whose warnings were held back: said once their minute is past, even when the flood ended.
    auth_.SayHeldOver(now);
    state_.SayHeldOver(now);
    unregistered_.SayHeldOver(now);
    malformed_.SayHeldOver(now);
    lock.lock();
  }
}

grpc::Status TrackerService::AgentSession(
    grpc::ServerContext* ctx, grpc::ServerReaderWriter<proto::TrackerMessage, proto::AgentMessage>* stream) {
  return RunAgentSession(session_, ctx, stream);
}

grpc::Status TrackerService::Acquire(grpc::ServerContext* ctx, const proto::AcquireRequest* req,
                                     proto::AcquireReply* reply) {
  if (auto s = auth_.Check(req->token(), *ctx, "Acquire"); !s.ok()) return s;
  if (const auto problem = DeviceKeyProblem(req->key())) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the device key " + *problem);
  }
  auto granted = state_.Acquire(*req, [ctx] { return ctx->IsCancelled(); });
  if (!granted.ok()) return ToGrpc(granted.status());
  *reply = std::move(granted).value();
  return grpc::Status::OK;
}

grpc::Status TrackerService::Measure(grpc::ServerContext* ctx, const proto::MeasureBatch* batch,
                                     grpc::ServerWriter<proto::MeasureEvent>* writer) {
  if (auto s = auth_.Check(batch->token(), *ctx, "Measure"); !s.ok()) return s;
  return RunMeasure(state_, ctx, *batch, writer);
}

grpc::Status TrackerService::Renew(grpc::ServerContext* ctx, const proto::RenewRequest* req,
                                   proto::RenewReply* reply) {
  if (auto s = auth_.Check(req->token(), *ctx, "Renew"); !s.ok()) return s;
  auto renewed = state_.Renew(req->lease_id());
  if (!renewed.ok()) return ToGrpc(renewed.status());
  reply->set_ttl(renewed->ttl);
  reply->set_devices(renewed->devices);
  return grpc::Status::OK;
}

grpc::Status TrackerService::Release(grpc::ServerContext* ctx, const proto::ReleaseRequest* req,
                                     proto::ReleaseReply*) {
  if (auto s = auth_.Check(req->token(), *ctx, "Release"); !s.ok()) return s;
  return ToGrpc(state_.Release(req->lease_id()));
}

grpc::Status TrackerService::Summary(grpc::ServerContext* ctx, const proto::SummaryRequest* req,
                                     proto::SummaryReply* reply) {
  if (auto s = auth_.Check(req->token(), *ctx, "Summary"); !s.ok()) return s;
  *reply = state_.Summary();
  return grpc::Status::OK;
}

}  // namespace tunefleet::tracker

#include "tracker/measure_handler.h"

#include <spdlog/spdlog.h>

#include "tracker/grpc_status.h"
#include "tracker/lease_table.h"

namespace tunefleet::tracker {

grpc::Status RunMeasure(TrackerState& state, grpc::ServerContext* ctx, const proto::MeasureBatch& batch,
                        grpc::ServerWriter<proto::MeasureEvent>* writer) {
  auto events = std::make_shared<EventMailbox>();
  auto started = state.StartMeasure(batch, events);
  if (!started.ok()) return ToGrpc(started.status());  // the client names the call ("measure: ...")
  const BatchId id = *started;
  const int total = batch.jobs_size();
  int written = 0;
  std::vector<proto::MeasureEvent> got;
  grpc::Status result = grpc::Status::OK;
  while (written < total) {
    const auto took = events->Take(&got, std::chrono::milliseconds(200));
    if (took == EventMailbox::Took::kClosed) {
      result = grpc::Status(grpc::StatusCode::UNAVAILABLE, "tracker is shutting down");
      break;
    }
    if (ctx->IsCancelled()) {
      // Stopped, killed or at the end of its time budget: the client no longer waits for the batch.
      spdlog::info("measure on {}: the client stopped waiting; {} of {} jobs dropped", LeaseLogName(batch.lease_id()),
                   total - written, total);
      result = grpc::Status(grpc::StatusCode::CANCELLED, "client cancelled");
      break;
    }
    for (const auto& ev : got) {
      if (!writer->Write(ev)) {
        result = grpc::Status(grpc::StatusCode::CANCELLED, "client stream broken");
        break;
      }
      ++written;
    }
    if (!result.ok()) break;
  }
  state.EndMeasure(batch.lease_id(), id);
  return result;
}

}  // namespace tunefleet::tracker

// The Measure server-streaming handler (sync API: runs on its gRPC handler thread). Queues the batch on its
// lease through TrackerState, then writes one MeasureEvent per job as they arrive, and returns when every
// job has its event. A client that goes away drops what is left of the batch. While it runs, the lease is
// pinned (it cannot expire) and it is renewed when the call ends.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/sync_stream.h>

#include "proto/tunefleet.grpc.pb.h"
#include "tracker/tracker_state.h"

namespace tunefleet::tracker {

grpc::Status RunMeasure(TrackerState& state, grpc::ServerContext* ctx, const proto::MeasureBatch& batch,
                        grpc::ServerWriter<proto::MeasureEvent>* writer);

}  // namespace tunefleet::tracker

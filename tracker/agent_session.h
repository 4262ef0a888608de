// The AgentSession stream handler (sync API, one handler thread per agent plus one reader thread).
// The handler thread writes the agent's mailbox (Registered, then Jobs) to the stream; the reader thread
// feeds every AgentMessage to TrackerState. The session ends when the agent closes its side, misbehaves,
// goes silent past the heartbeat timeout (TrackerState closes the mailbox), or the tracker shuts down;
// either way the agent is removed and its running job ends as device_lost.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/sync_stream.h>

#include "proto/tunefleet.grpc.pb.h"
#include "tracker/auth.h"
#include "tracker/tracker_state.h"

namespace tunefleet::tracker {

using AgentStream = grpc::ServerReaderWriter<proto::TrackerMessage, proto::AgentMessage>;

// Runs one agent's session to its end. Blocks the calling (gRPC handler) thread.
grpc::Status RunAgentSession(TrackerState& state, const TokenCheck& auth, grpc::ServerContext* ctx,
                             AgentStream* stream);

}  // namespace tunefleet::tracker

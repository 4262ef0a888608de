// The AgentSession stream handler (sync API, one handler thread per agent plus one reader thread).
// The handler thread writes the agent's mailbox (Registered, then Jobs) to the stream; the reader thread
// feeds every AgentMessage to TrackerState. The session ends when the agent closes its side, misbehaves,
// goes silent past the heartbeat timeout, or the tracker shuts down; either way the agent is removed, its running
// job ends as device_lost, and the call is cancelled, so that a handler thread blocked writing to a peer that
// stopped reading is let go too.
//
// A stream that sends no RegisterAgent within SessionOptions::register_timeout is cancelled (by the owner of the
// CallDeadlines, see call_deadlines.h): the token and --max-agents are checked only on that message, so until
// then the stream holds a handler thread that anyone who can connect may open.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/sync_stream.h>

#include "proto/tunefleet.grpc.pb.h"
#include "tracker/auth.h"
#include "tracker/call_deadlines.h"
#include "tracker/tracker_state.h"
#include "tracker/warning_throttle.h"

namespace tunefleet::tracker {

using AgentStream = grpc::ServerReaderWriter<proto::TrackerMessage, proto::AgentMessage>;

struct SessionOptions {
  // Seconds from the stream's start to its RegisterAgent. An agent sends it as soon as it connects; the tracker
  // uses its heartbeat timeout, the silence after which a registered agent is dropped too.
  double register_timeout = 15;
};

// What every session shares. All are borrowed and outlive the sessions.
struct SessionDeps {
  TrackerState& state;
  const TokenCheck& auth;
  CallDeadlines& deadlines;
  SessionOptions options;
  WarningThrottle& unregistered;  // the "no RegisterAgent within" warning: 1,000 silent streams said it 1,000 times
  WarningThrottle& malformed;     // a first message that is no RegisterAgent, or a bad one: 200 streams, 200 lines
};

// Runs one agent's session to its end. Blocks the calling (gRPC handler) thread.
grpc::Status RunAgentSession(const SessionDeps& deps, grpc::ServerContext* ctx, AgentStream* stream);

}  // namespace tunefleet::tracker

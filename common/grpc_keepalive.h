// gRPC keepalive between the tracker and its clients (agents, the tuner).
//
// A tracker that hangs with its sockets open (stopped, swapped out, its host frozen, a NAT that dropped the flow)
// answers nothing and closes nothing: without pings a client's open stream waits on it silently forever. With them,
// a client whose ping gets no answer within kKeepaliveTimeoutMs closes the connection, its calls fail with
// UNAVAILABLE, and it says so and reconnects as after any loss. The tracker must accept those pings while a stream
// is quiet (a kernel measuring for minutes sends nothing): gRPC's documented default ends a connection that pings
// more often than every 5 minutes without data (GOAWAY "too_many_pings"), so the tracker says what it accepts.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

namespace tunefleet {

inline constexpr int kKeepaliveTimeMs = 20'000;     // a ping after this long without a frame from the tracker
inline constexpr int kKeepaliveTimeoutMs = 10'000;  // the connection is given up when the ping's answer is this late

// For a client's channel: ping while a call is open, however long nothing else is sent.
inline void SetClientKeepalive(grpc::ChannelArguments* args) {
  args->SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args->SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args->SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);  // no limit: a Measure stream is quiet for minutes
}

// For the tracker: accept the clients' pings at half their period (with or without an open call), so that a quiet
// stream is never ended as abusive.
inline void AcceptClientKeepalive(grpc::ServerBuilder* builder) {
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, kKeepaliveTimeMs / 2);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
}

// gRPC's own words for a connection given up by keepalive ("keepalive watchdog timeout"), said for a user.
inline std::string ExplainKeepalive(std::string message) {
  if (message.find("keepalive watchdog timeout") != std::string::npos) {
    message += " (no answer to a ping within " + std::to_string(kKeepaliveTimeoutMs / 1000) +
               " s: the tracker hangs, or the network dropped the connection)";
  }
  return message;
}

}  // namespace tunefleet

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

// For a client's channel that lives through a tracker restart (the tuner's): gRPC's reconnect back-off grows to
// 120 s by default, and a run whose tracker came back after 3 s got its devices again 9-10 s later (the agents were
// back within 1 s); with at most 2 s between attempts (a lab's network), about 4 s later (by hand, 2026-12-06).
inline constexpr int kMaxReconnectBackoffMs = 2'000;
inline void SetClientReconnect(grpc::ChannelArguments* args) {
  // GRPC_ARG_MIN_RECONNECT_BACKOFF_MS is also the least time gRPC gives a connection attempt (20 s by default), and
  // it is what held the run back: 2 s leaves room for a TLS handshake over a slow link.
  args->SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 250);
  args->SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
  args->SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
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

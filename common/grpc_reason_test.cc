#include "common/grpc_reason.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

// The messages are gRPC's (Debian's 1.51), as the tuner and the agent received them from an unreachable tracker.
TEST(GrpcReasonTest, GivenARefusedConnectionOnlyTheSystemsReasonShouldBeLeft) {
  EXPECT_EQ(GrpcReason("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:47110: Failed to "
                       "connect to remote host: Connection refused"),
            "Connection refused");
  EXPECT_EQ(GrpcReason("failed to connect to all addresses; last error: UNKNOWN: ipv6:%5B::1%5D:1: Failed to "
                       "connect to remote host: Connection refused"),
            "Connection refused");
  EXPECT_EQ(GrpcReason("failed to connect to all addresses; last error: UNAVAILABLE: ipv4:10.0.0.7:9190: Failed to "
                       "connect to remote host: No route to host"),
            "No route to host");
}

TEST(GrpcReasonTest, GivenAFailedTlsHandshakeTheTlsLibrarysReasonShouldBeLeft) {
  EXPECT_EQ(GrpcReason("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:9190: Ssl handshake "
                       "failed: SSL_ERROR_SSL: error:0A00010B:SSL routines::wrong version number"),
            "Ssl handshake failed: SSL_ERROR_SSL: error:0A00010B:SSL routines::wrong version number");
}

TEST(GrpcReasonTest, GivenAFailedLookupTheNameAndTheResolversReasonShouldBeLeft) {
  EXPECT_EQ(GrpcReason("DNS resolution failed for nosuch.invalid:9190: C-ares status is not ARES_SUCCESS qtype=A "
                       "name=nosuch.invalid is_balancer=0: Domain name not found"),
            "DNS resolution failed for nosuch.invalid:9190: Domain name not found");
}

// As a tracker that died, a peer that is no tracker and a stopped tracker were said (the network review).
TEST(GrpcReasonTest, GivenGrpcsOwnWordsTheCauseShouldComeFirstInPlainWords) {
  EXPECT_EQ(GrpcReason("Socket closed"), "the connection was closed: Socket closed");
  EXPECT_EQ(GrpcReason("CANCELLED"), "the connection was lost: CANCELLED");
  EXPECT_EQ(GrpcReason("Cancelled on the server side"),
            "the tracker ended the connection: Cancelled on the server side");
  EXPECT_EQ(GrpcReason("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:47390: Failed "
                       "parsing HTTP/2"),
            "what answers there is not a tunefleet tracker: Failed parsing HTTP/2");
  EXPECT_EQ(GrpcReason("connection attempt timed out before receiving SETTINGS frame"),
            "the peer took the connection but did not answer: connection attempt timed out before receiving "
            "SETTINGS frame");
  EXPECT_EQ(GrpcReason("Deadline Exceeded"), "no answer in time: Deadline Exceeded");
  // A connection attempt cut short (a tune's --device-wait ran out while a stopping tracker was dialled again).
  EXPECT_EQ(GrpcReason("failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:47701: tcp "
                       "handshaker shutdown"),
            "the attempt to connect was given up before it was made: tcp handshaker shutdown");
  EXPECT_EQ(GrpcReason("recvmsg:Connection reset by peer"), "Connection reset by peer");
}

TEST(GrpcReasonTest, GivenAnyOtherMessageItShouldBeUnchanged) {
  EXPECT_EQ(GrpcReason("keepalive watchdog timeout"), "keepalive watchdog timeout");
  EXPECT_EQ(GrpcReason("Connection refused"), "Connection refused");
  EXPECT_EQ(GrpcReason("failed to connect to all addresses; last error: "),
            "failed to connect to all addresses; last error: ");
  EXPECT_EQ(GrpcReason("DNS resolution failed for x"), "DNS resolution failed for x");
  EXPECT_EQ(GrpcReason(""), "");
}

}  // namespace
}  // namespace tunefleet

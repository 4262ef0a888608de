#include "common/tls_hint.h"

#include <gtest/gtest.h>

#include <ctime>

namespace tunefleet {
namespace {

// gRPC's words for failed connections, as the tracker's clients see them (tracker/client_test.cc and
// tests/tls_e2e_test.cc make them happen).
TEST(TlsConnectionHintTest, GivenGrpcsReasonTheHintShouldSayWhatToChange) {
  const std::time_t now = std::time(nullptr);
  const std::string some_root = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  EXPECT_EQ(TlsConnectionHint("ipv4:127.0.0.1:9190: Socket closed", "", now), "if the tracker uses TLS, give --tls-ca");
  EXPECT_EQ(TlsConnectionHint("Ssl handshake failed: SSL_ERROR_SSL: error:0A00010B:SSL routines::wrong version number",
                              some_root, now),
            "the tracker does not use TLS: drop --tls-ca, or start the tracker with --tls-cert and --tls-key");
  EXPECT_EQ(TlsConnectionHint("SSL routines::certificate verify failed", some_root, now),
            "the tracker's certificate is not signed by a certificate of --tls-ca, or is out of date");
  // No hint where the words are not of TLS, or do not fit the client's side of it.
  EXPECT_EQ(TlsConnectionHint("Connection refused", "", now), "");
  EXPECT_EQ(TlsConnectionHint("Connection refused", some_root, now), "");
  EXPECT_EQ(TlsConnectionHint("Socket closed", some_root, now), "");
  EXPECT_EQ(TlsConnectionHint("wrong version number", "", now), "");
}

}  // namespace
}  // namespace tunefleet

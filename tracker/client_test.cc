// TrackerClient against nothing, and against an in-process tracker on a free loopback port.
#include "tracker/client.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/asio.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

#include "common/temp_dir_testing.h"
#include "common/tls_testing.h"
#include "tracker/lease_keep_alive.h"
#include "tracker/server.h"
#include "tracker/test_agent.h"

namespace tunefleet {
namespace {

// A loopback port with nothing listening: bound once to learn a free number, then closed.
int UnusedPort() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

TEST(TrackerClientTest, GivenNothingListening_ConnectShouldFailWithinTheTimeoutNamingTheAddress) {
  const std::string target = "127.0.0.1:" + std::to_string(UnusedPort());
  auto c = TrackerClient::Connect(target, "", 0.5);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(c.status().message().find("cannot reach tracker at " + target + ":"), std::string::npos)
      << c.status().message();
  // gRPC's reason, from one fail-fast call after the wait.
  EXPECT_NE(c.status().message().find("Connection refused"), std::string::npos) << c.status().message();
}

// A peer that takes the TCP connection and never answers (a stopped tracker): the wait is the timeout, not a second
// more asking gRPC for a reason it does not have yet.
TEST(TrackerClientTest, GivenAPeerThatNeverAnswers_ConnectShouldFailAtTheTimeoutSayingSo) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor silent(io, {boost::asio::ip::make_address("127.0.0.1"), 0});  // never accepts
  const std::string target = "127.0.0.1:" + std::to_string(silent.local_endpoint().port());
  const auto start = std::chrono::steady_clock::now();
  auto c = TrackerClient::Connect(target, "", 0.5);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "cannot reach tracker at " + target + ": no connection within 0.5 s (no answer from the peer yet)");
  EXPECT_LT(took, 1.4);  // 1.5 s before: the timeout and a second's ask
}

TEST(TrackerClientTest, GivenNothingListeningAndGiveUpOnFirstFailure_ConnectShouldSayTheConnectionFailed) {
  const std::string target = "127.0.0.1:" + std::to_string(UnusedPort());
  TrackerClientOptions o;
  o.connect_timeout = 600;  // not waited for: the refused attempt ends it
  o.give_up_on_first_failure = true;
  auto c = TrackerClient::Connect(target, o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(c.status().message().find("cannot reach tracker at " + target + ": the connection failed ("),
            std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("Connection refused"), std::string::npos) << c.status().message();
}

TEST(TrackerClientTest, GivenATrackerAndGiveUpOnFirstFailure_ConnectShouldSucceed) {
  tracker::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = 0;
  auto server = tracker::TrackerServer::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  TrackerClientOptions o;
  o.give_up_on_first_failure = true;
  auto c = TrackerClient::Connect("127.0.0.1:" + std::to_string((*server)->port()), o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE((*c)->Summary().ok());
}

TEST(TrackerClientTest, GivenAnAddressWithoutPort_ConnectShouldRejectIt) {
  auto c = TrackerClient::Connect("localhost", "", 0.5);
  EXPECT_EQ(c.status().code(), Status::Code::kInvalidArgument);
}

class TrackerClientLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tracker::ServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.lease_ttl = 1;  // seconds: short, so that expiry is reached quickly
    auto s = tracker::TrackerServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
    target_ = "127.0.0.1:" + std::to_string(server_->port());
    agent_ = std::make_unique<tracker::TestAgent>(target_, "pocl", "", tracker::TestAgent::Mode::kAnswer);
    ASSERT_FALSE(agent_->WaitRegistered().empty());
    auto c = TrackerClient::Connect(target_, "", 5);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    client_ = std::move(c).value();
  }

  std::unique_ptr<tracker::TrackerServer> server_;
  std::string target_;
  std::unique_ptr<tracker::TestAgent> agent_;
  std::unique_ptr<TrackerClient> client_;
};

TEST_F(TrackerClientLeaseTest, GivenAnUnrenewedLease_WeShouldSeeItExpireAndTheAgentFreed) {
  auto lease = client_->Acquire("pocl", 1, 0, 0, 5, "test");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_DOUBLE_EQ(lease->ttl, 1.0);
  // Poll (no timing assertion): the lease must go away on its own, and the agent become free again.
  bool expired = false;
  for (int i = 0; i < 200 && !expired; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto s = client_->Summary();
    ASSERT_TRUE(s.ok());
    expired = s->agents_size() == 1 && s->agents(0).state() == "free";
  }
  EXPECT_TRUE(expired);
  EXPECT_EQ(client_->Renew(*lease).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(client_->Release(*lease).code(), Status::Code::kNotFound);
}

TEST_F(TrackerClientLeaseTest, GivenAReleasedLease_TheKeepAliveShouldHoldTheRenewalError) {
  auto lease = client_->Acquire("pocl", 1, 0, 0, 5, "test");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  ASSERT_TRUE(client_->Release(*lease).ok());
  LeaseKeepAlive keep(client_.get(), *lease);
  Status error;
  for (int i = 0; i < 200 && error.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    error = keep.last_error();
  }
  EXPECT_EQ(error.code(), Status::Code::kNotFound) << error.ToString();
  EXPECT_EQ(keep.renewals(), 0);
}

TEST_F(TrackerClientLeaseTest, GivenAKeepAlive_WeShouldKeepTheLeasePastItsTtl) {
  auto lease = client_->Acquire("pocl", 1, 0, 0, 5, "test");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  {
    LeaseKeepAlive keep(client_.get(), *lease);
    while (keep.renewals() < 6) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // > 2 ttl
    EXPECT_TRUE(keep.last_error().ok()) << keep.last_error().ToString();
  }
  EXPECT_TRUE(client_->Renew(*lease).ok());
  std::vector<proto::MeasureJob> jobs(2);
  jobs[0].set_job_id(10);
  jobs[1].set_job_id(11);
  int events = 0;
  EXPECT_TRUE(client_->Measure(lease->lease_id, jobs, [&](const proto::MeasureEvent&) { ++events; }).ok());
  EXPECT_EQ(events, 2);
  EXPECT_TRUE(client_->Release(*lease).ok());
}

TEST_F(TrackerClientLeaseTest, GivenAnUnknownLease_MeasureShouldFailWithNotFound) {
  std::vector<proto::MeasureJob> jobs(1);
  Status s = client_->Measure("lease-999", jobs, [](const proto::MeasureEvent&) {});
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("lease-999"), std::string::npos) << s.message();
}

TEST(TrackerClientCancelTest, GivenAMeasureWaitingOnASilentAgent_CancelCallsShouldEndItAndReleaseShouldStillWork) {
  tracker::ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  auto server = tracker::TrackerServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string target = "127.0.0.1:" + std::to_string((*server)->port());
  tracker::TestAgent agent(target, "pocl", "", tracker::TestAgent::Mode::kSilent);
  ASSERT_FALSE(agent.WaitRegistered().empty());
  auto c = TrackerClient::Connect(target, "", 5);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  TrackerClient& client = **c;
  auto lease = client.Acquire("pocl", 1, 0, 0, 5, "test");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();

  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    client.CancelCalls();
  });
  std::vector<proto::MeasureJob> jobs(1);
  jobs[0].set_job_id(1);
  const auto start = std::chrono::steady_clock::now();
  Status s = client.Measure(lease->lease_id, jobs, [](const proto::MeasureEvent&) {});
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
  EXPECT_TRUE(client.cancelled());

  // Later Acquire/Measure/Renew calls fail at once (a renewal on a stalled link held a Ctrl-C for its period);
  // Release still frees the agent.
  EXPECT_NE(client.Acquire("pocl", 1, 0, 0, 5, "test").status().message().find("cancelled"), std::string::npos);
  EXPECT_NE(client.Measure(lease->lease_id, jobs, [](const proto::MeasureEvent&) {}).message().find("cancelled"),
            std::string::npos);
  EXPECT_NE(client.Renew(*lease).status().message().find("renew: cancelled"), std::string::npos);
  EXPECT_TRUE(client.Release(*lease).ok());
  auto summary = client.Summary();
  ASSERT_TRUE(summary.ok());
  ASSERT_EQ(summary->keys_size(), 1);
  EXPECT_EQ(summary->keys(0).free(), 1u);
}

}  // namespace
}  // namespace tunefleet

namespace tunefleet {
namespace {

// A tracker on 127.0.0.1 (any free port) with TLS from `cert` and `key`.
tracker::ServerOptions TlsServer(const std::string& cert, const std::string& key) {
  tracker::ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.tls_cert_file = cert;
  o.tls_key_file = key;
  return o;
}

TEST(TrackerClientTlsTest, GivenATlsTracker_AClientTrustingItsCertificateShouldConnectAndAPlainOneShouldNot) {
  TempDir dir;
  if (!testing::MakeSelfSignedCertificate(dir.path())) GTEST_SKIP() << "openssl tool not available";
  auto server = tracker::TrackerServer::Start(TlsServer(dir.File("cert.pem"), dir.File("key.pem")));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string target = "127.0.0.1:" + std::to_string((*server)->port());

  TrackerClientOptions tls;
  tls.tls_ca_file = dir.File("cert.pem");
  auto client = TrackerClient::Connect(target, tls);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_TRUE((*client)->Summary().ok());

  TrackerClientOptions plain;
  plain.connect_timeout = 0.5;
  auto no = TrackerClient::Connect(target, plain);
  if (no.ok()) {
    EXPECT_FALSE((*no)->Summary().ok());
  } else {
    EXPECT_NE(no.status().message().find("cannot reach tracker"), std::string::npos);
  }
}

TEST(TrackerClientTlsTest, GivenFilesThatAreNotPem_StartAndConnectShouldNameThem) {
  TempDir dir;
  const std::string text = dir.File("notes.txt");
  std::ofstream(text) << "not a certificate\n";
  auto server = tracker::TrackerServer::Start(TlsServer(text, text));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(server.status().message(), "TLS certificate '" + text + "': no PEM certificate in it");

  TrackerClientOptions tls;
  tls.tls_ca_file = text;
  auto client = TrackerClient::Connect("127.0.0.1:1", tls);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(client.status().message(), "TLS root certificates '" + text + "': no PEM certificate in it");
}

// A key of another certificate, or a certificate cut short, is named in one line before gRPC is asked to listen
// (which said only that it could not, after lines of its own).
TEST(TrackerClientTlsTest, GivenAKeyOfAnotherCertificateOrADamagedCertificate_StartShouldSayWhich) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.File("other").c_str(), 0700), 0);
  if (!testing::MakeSelfSignedCertificate(dir.path()) || !testing::MakeSelfSignedCertificate(dir.File("other")))
    GTEST_SKIP() << "openssl tool not available";
  const std::string cert = dir.File("cert.pem"), key = dir.File("key.pem"), other_key = dir.File("other/key.pem");
  auto server = tracker::TrackerServer::Start(TlsServer(cert, other_key));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(server.status().message(),
            "TLS key '" + other_key + "' is not the key of the certificate '" + cert + "'");

  std::string text;
  {
    std::ifstream in(cert);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(dir.File("cut.pem")) << text.substr(0, text.size() / 2);  // still a BEGIN CERTIFICATE line
  server = tracker::TrackerServer::Start(TlsServer(dir.File("cut.pem"), key));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(server.status().message().find("its first certificate cannot be read"), std::string::npos)
      << server.status().message();

  server = tracker::TrackerServer::Start(TlsServer(cert, key));  // the pair itself still starts
  EXPECT_TRUE(server.ok()) << server.status().ToString();
}

// An expired certificate is refused as the tracker starts, with its date: its clients' handshakes said only
// "certificate verify failed". A client that trusts an expired root, or another authority, is told which.
TEST(TrackerClientTlsTest, GivenAnExpiredCertificate_StartShouldRefuseItAndAClientTrustingItShouldBeToldSo) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.File("other").c_str(), 0700), 0);
  if (!testing::MakeSelfSignedCertificate(dir.path()) || !testing::MakeSelfSignedCertificate(dir.File("other")) ||
      !testing::MakeExpiredCertificate(dir.path()))
    GTEST_SKIP() << "openssl tool not available";
  const std::string expired = dir.File("expired/cert.pem");
  auto refused = tracker::TrackerServer::Start(TlsServer(expired, dir.File("expired/key.pem")));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "TLS certificate '" + expired +
                                            "': certificate 1 (CN=localhost) expired on 2020-01-02 00:00:00 UTC; "
                                            "no client accepts it");

  auto server = tracker::TrackerServer::Start(TlsServer(dir.File("cert.pem"), dir.File("key.pem")));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string target = "127.0.0.1:" + std::to_string((*server)->port());
  TrackerClientOptions tls;
  tls.connect_timeout = 5;
  tls.give_up_on_first_failure = true;
  tls.tls_ca_file = expired;
  auto client = TrackerClient::Connect(target, tls);
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find("certificate verify failed; --tls-ca's certificate 1 (CN=localhost) "
                                           "expired on 2020-01-02 00:00:00 UTC"),
            std::string::npos)
      << client.status().message();

  // Another authority's root, alone or in a bundle beside an expired one: the expired one is not the reason.
  std::string bundle;
  for (const std::string& part : {expired, dir.File("other/cert.pem")}) {
    std::ifstream in(part);
    bundle.append(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(dir.File("bundle.pem")) << bundle;
  for (const std::string& ca : {dir.File("other/cert.pem"), dir.File("bundle.pem")}) {
    tls.tls_ca_file = ca;
    client = TrackerClient::Connect(target, tls);
    ASSERT_FALSE(client.ok());
    EXPECT_NE(client.status().message().find("certificate verify failed; the tracker's certificate is not signed by "
                                             "a certificate of --tls-ca, or is out of date"),
              std::string::npos)
        << ca << ": " << client.status().message();
  }
}

// A TLS client meeting a plain tracker is told to drop --tls-ca (OpenSSL says "wrong version number").
TEST(TrackerClientTlsTest, GivenAPlainTracker_ATlsClientShouldBeToldItDoesNotUseTls) {
  TempDir dir;
  if (!testing::MakeSelfSignedCertificate(dir.path())) GTEST_SKIP() << "openssl tool not available";
  auto server = tracker::TrackerServer::Start(TlsServer("", ""));  // no TLS files: a plain tracker
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  TrackerClientOptions tls;
  tls.connect_timeout = 5;
  tls.give_up_on_first_failure = true;
  tls.tls_ca_file = dir.File("cert.pem");
  auto client = TrackerClient::Connect("127.0.0.1:" + std::to_string((*server)->port()), tls);
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find("wrong version number; the tracker does not use TLS: drop --tls-ca, or "
                                           "start the tracker with --tls-cert and --tls-key"),
            std::string::npos)
      << client.status().message();
}

// A key protected by a passphrase (PKCS#8, and the older RSA form) is said in the tracker's one line; OpenSSL must not
// ask for the passphrase first ("Enter PEM pass phrase:" on the terminal, or on stderr when there is none).
TEST(TrackerClientTlsTest, GivenAKeyProtectedByAPassphrase_StartShouldSaySoWithoutAskingForIt) {
  TempDir dir;
  if (!testing::MakeSelfSignedCertificate(dir.path())) GTEST_SKIP() << "openssl tool not available";
  const std::string cert = dir.File("cert.pem"), key = dir.File("key.pem");
  const std::string pkcs8 = dir.File("keyenc.pem"), rsa = dir.File("keyenc_rsa.pem");
  const std::string make = "openssl pkey -in " + key + " -aes256 -passout pass:secret -out " + pkcs8 +
                           " >/dev/null 2>&1 && openssl rsa -in " + key +
                           " -aes256 -traditional -passout pass:secret -out " + rsa + " >/dev/null 2>&1";
  if (std::system(make.c_str()) != 0) GTEST_SKIP() << "openssl tool cannot encrypt a key";
  for (const std::string& encrypted : {pkcs8, rsa}) {
    ::testing::internal::CaptureStderr();
    auto server = tracker::TrackerServer::Start(TlsServer(cert, encrypted));
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    ASSERT_FALSE(server.ok());
    EXPECT_EQ(server.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(server.status().message(), "TLS key '" + encrypted +
                                             "': the private key cannot be read (damaged, truncated, or protected by "
                                             "a passphrase)");
  }
}

TEST(TrackerClientTlsTest, GivenACertificateWithoutKey_StartShouldFail) {
  tracker::ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.tls_cert_file = "/nonexistent/cert.pem";
  auto server = tracker::TrackerServer::Start(o);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace tunefleet

// In-process tracker on a free loopback port, real gRPC clients: TestAgent (stands in for the OpenCL agent,
// see test_agent.h) and TrackerClient (the tuner's client).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <future>
#include <set>
#include <thread>

#include "common/spdlog_capture_testing.h"
#include "tracker/auth.h"
#include "tracker/client.h"
#include "tracker/server.h"
#include "tracker/test_agent.h"

namespace tunefleet::tracker {
namespace {

class TrackerServiceTest : public ::testing::Test {
 protected:
  void StartTracker(const std::string& token = "", double heartbeat_timeout = 15, uint32_t max_agents = 1000) {
    ServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.token = token;
    o.heartbeat_timeout = heartbeat_timeout;
    o.max_agents = max_agents;
    auto s = TrackerServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
    target_ = "127.0.0.1:" + std::to_string(server_->port());
  }
  std::unique_ptr<TrackerClient> Client(const std::string& token = "") {
    auto c = TrackerClient::Connect(target_, token, 5);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }
  std::unique_ptr<TestAgent> Agent(const std::string& key, TestAgent::Mode mode = TestAgent::Mode::kAnswer,
                                   const std::string& token = "") {
    auto a = std::make_unique<TestAgent>(target_, key, token, mode);
    EXPECT_FALSE(a->WaitRegistered().empty());
    return a;
  }
  static std::vector<proto::MeasureJob> Jobs(int n) {
    std::vector<proto::MeasureJob> jobs(n);
    for (int i = 0; i < n; ++i) jobs[i].set_job_id(static_cast<uint64_t>(i));
    return jobs;
  }

  std::unique_ptr<TrackerServer> server_;
  std::string target_;
};

// A tracker that listens beyond loopback without a token warns at its start (the shipped systemd conf listened on
// 0.0.0.0 with no token and said nothing); on loopback, or with a token, it has nothing to say.
TEST(OpenTrackerWarning, GivenNoTokenAndAnAddressBeyondLoopbackTheTrackerShouldWarn) {
  for (const std::string host : {"0.0.0.0", "::", "", "192.0.2.1", "lab-server"}) {
    EXPECT_NE(OpenTrackerWarning(host, false).find("whoever reaches its port can register agents"), std::string::npos)
        << host;
    EXPECT_EQ(OpenTrackerWarning(host, true), "") << host;
  }
  for (const std::string host : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"}) {
    EXPECT_EQ(OpenTrackerWarning(host, false), "") << host;
  }
}

// A token guards the gRPC side only: a tracker given one and a status port beyond loopback says that the status page
// answers without it (a user who set a token took the whole tracker to be guarded).
TEST(OpenStatusPortWarning, GivenATokenAndAStatusPortBeyondLoopbackTheTrackerShouldSayItAnswersWithoutIt) {
  for (const std::string host : {"0.0.0.0", "::", "", "192.0.2.1", "lab-server"}) {
    EXPECT_NE(OpenStatusPortWarning(host, true).find("answer without the token"), std::string::npos) << host;
    EXPECT_EQ(OpenStatusPortWarning(host, false), "") << host;  // OpenTrackerWarning says more
  }
  for (const std::string host : {"127.0.0.1", "::1", "[::1]", "localhost"}) {
    EXPECT_EQ(OpenStatusPortWarning(host, true), "") << host;
  }
}

TEST_F(TrackerServiceTest, GivenTwoAgents_WeShouldMeasureABatchOfNJobsIntoNEvents) {
  StartTracker();
  auto a1 = Agent("pocl");
  auto a2 = Agent("pocl");
  auto client = Client();
  auto lease = client->Acquire("pocl", 2, 0, 0, 5, "test@host");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(lease->devices.size(), 2u);

  std::vector<proto::MeasureEvent> events;
  Status s = client->Measure(lease->lease_id, Jobs(7), [&](const proto::MeasureEvent& e) { events.push_back(e); });
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(events.size(), 7u);
  std::set<uint64_t> ids;
  std::set<std::string> agents;
  for (const auto& e : events) {
    EXPECT_FALSE(e.device_lost());
    EXPECT_DOUBLE_EQ(e.result().mean_cost(), 1e-3 * static_cast<double>(e.job_id() + 1));
    EXPECT_EQ(e.device_fingerprint(), "fp-pocl");
    ids.insert(e.job_id());
    agents.insert(e.agent_id());
  }
  EXPECT_EQ(ids.size(), 7u);
  EXPECT_EQ(agents.size(), 2u);  // both agents were idle when the batch came
  EXPECT_EQ(a1->jobs_seen() + a2->jobs_seen(), 7);
  EXPECT_TRUE(client->Release(*lease).ok());
}

TEST_F(TrackerServiceTest, GivenAnAgentKilledMidBatch_WeShouldGetDeviceLostForItsJobAndTheRestFromTheOther) {
  StartTracker();
  auto good = Agent("pocl");
  auto doomed = Agent("pocl", TestAgent::Mode::kDieOnJob);
  auto client = Client();
  auto lease = client->Acquire("pocl", 2, 0, 0, 5, "test");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();

  std::vector<proto::MeasureEvent> events;
  Status s = client->Measure(lease->lease_id, Jobs(5), [&](const proto::MeasureEvent& e) { events.push_back(e); });
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(events.size(), 5u);
  int lost = 0;
  for (const auto& e : events) {
    if (e.device_lost()) {
      ++lost;
      EXPECT_FALSE(e.message().empty());
      EXPECT_FALSE(e.has_result());
    }
  }
  EXPECT_EQ(lost, 1);
  EXPECT_EQ(doomed->jobs_seen(), 1);
  EXPECT_EQ(good->jobs_seen(), 4);

  auto summary = client->Summary();
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->agents_size(), 1);  // the lease and the registry lost the dead agent
}

TEST_F(TrackerServiceTest, GivenAnAgentThatSendsANanCost_WeShouldDropItAndMeasureItsJobElsewhere) {
  StartTracker();
  auto good = Agent("pocl");
  auto broken = Agent("pocl", TestAgent::Mode::kNanCost);
  auto client = Client();
  auto lease = client->Acquire("pocl", 2, 0, 0, 5, "test");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();

  std::vector<proto::MeasureEvent> events;
  Status s = client->Measure(lease->lease_id, Jobs(5), [&](const proto::MeasureEvent& e) { events.push_back(e); });
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(events.size(), 5u);
  int lost = 0;
  for (const auto& e : events) {
    if (e.device_lost()) {
      ++lost;
      EXPECT_NE(e.message().find("that is OK with a cost that is not a time between 1 ps and 10^6 s"),
                std::string::npos)
          << e.message();
    } else {
      ASSERT_EQ(e.result().costs_size(), 1);
      EXPECT_TRUE(std::isfinite(e.result().costs(0)) && e.result().costs(0) > 0);
    }
  }
  EXPECT_EQ(lost, 1);
  EXPECT_EQ(broken->jobs_seen(), 1);
  EXPECT_EQ(broken->WaitEnded().error_code(), grpc::StatusCode::CANCELLED);  // dropped
  auto summary = client->Summary();
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->agents_size(), 1);
}

TEST_F(TrackerServiceTest, GivenAKeyWithAControlCharacter_RegisterAndAcquireShouldBeRefused) {
  StartTracker();
  TestAgent evil(target_, "evil\n[info] forged line", "", TestAgent::Mode::kAnswer);
  EXPECT_EQ(evil.WaitRegistered(), "");
  const grpc::Status ended = evil.WaitEnded();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ended.error_message(), "the device key holds a control character (byte 0x0a at 4)");
  auto client = Client();
  auto lease = client->Acquire(std::string(200, 'k'), 1, 0, 0, 1, "test");
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(lease.status().message().find("the device key is 200 bytes long (at most 128)"), std::string::npos)
      << lease.status().message();
  auto summary = client->Summary();
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->agents_size(), 0);
  EXPECT_EQ(summary->keys_size(), 0);
}

TEST_F(TrackerServiceTest, GivenALeaseWhoseOnlyAgentDies_WeShouldEndEveryJobAsDeviceLost) {
  StartTracker();
  auto doomed = Agent("pocl", TestAgent::Mode::kDieOnJob);
  auto client = Client();
  auto lease = client->Acquire("pocl", 1, 0, 0, 5, "test");
  ASSERT_TRUE(lease.ok());
  int lost = 0, total = 0;
  Status s = client->Measure(lease->lease_id, Jobs(3), [&](const proto::MeasureEvent& e) {
    ++total;
    lost += e.device_lost() ? 1 : 0;
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(total, 3);
  EXPECT_EQ(lost, 3);
}

TEST_F(TrackerServiceTest, GivenAWrongToken_WeShouldAnswerUnauthenticated) {
  StartTracker("s3cret");
  auto bad_client = Client("wrong");
  auto summary = bad_client->Summary();
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), Status::Code::kPermissionDenied);
  EXPECT_NE(summary.status().message().find("invalid token"), std::string::npos);
  // A client that sent none is told that the tracker needs one ("invalid token" alone read as a wrong one).
  auto no_token = Client("")->Summary();
  ASSERT_FALSE(no_token.ok());
  EXPECT_NE(no_token.status().message().find("invalid token: none given, and this tracker requires one"),
            std::string::npos)
      << no_token.status().ToString();

  TestAgent bad_agent(target_, "pocl", "wrong", TestAgent::Mode::kAnswer);
  EXPECT_EQ(bad_agent.WaitRegistered(), "");
  EXPECT_EQ(bad_agent.WaitEnded().error_code(), grpc::StatusCode::UNAUTHENTICATED);

  auto good = Agent("pocl", TestAgent::Mode::kAnswer, "s3cret");
  auto ok = Client("s3cret")->Summary();
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->agents_size(), 1);
}

// Anyone who reaches the port can call with a wrong token: 6,000 calls wrote 6,000 warnings in 1.6 s. The first is
// said, then one a minute with the count.
TEST_F(TrackerServiceTest, GivenAFloodOfCallsWithAWrongTokenTheWarningShouldBeSaidOnceWithinAMinute) {
  testing::CapturedSpdlog log;
  StartTracker("s3cret");
  auto bad_client = Client("wrong");
  for (int i = 0; i < 200; ++i) ASSERT_FALSE(bad_client->Summary().ok());
  server_.reset();  // its threads stopped: the log is read whole
  const std::string text = log.text();
  size_t lines = 0;
  for (size_t at = text.find("invalid token"); at != std::string::npos; at = text.find("invalid token", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << text;
  EXPECT_NE(text.find("Summary from ipv4:127.0.0.1:"), std::string::npos) << text;
}

TEST_F(TrackerServiceTest, GivenRegisteredAgents_SummaryShouldListThemAndTheQueuePerKey) {
  StartTracker();
  auto a = Agent("phone");
  auto b = Agent("phone");
  auto c = Agent("gpu");
  auto client = Client();
  auto lease = client->Acquire("phone", 1, 0, 0, 5, "alice@lab");
  ASSERT_TRUE(lease.ok());
  auto summary = client->Summary();
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_EQ(summary->agents_size(), 3);
  int leased = 0;
  for (const auto& ag : summary->agents()) {
    EXPECT_FALSE(ag.peer().empty());
    EXPECT_EQ(ag.device().name(), "test-device-" + ag.key());
    if (ag.state() == "leased") {
      ++leased;
      EXPECT_EQ(ag.lease_holder(), "alice@lab");
    }
  }
  EXPECT_EQ(leased, 1);
  ASSERT_EQ(summary->keys_size(), 2);
  for (const auto& k : summary->keys()) {
    if (k.key() == "phone") {
      EXPECT_EQ(k.free(), 1u);
      EXPECT_EQ(k.leased(), 1u);
    } else {
      EXPECT_EQ(k.key(), "gpu");
      EXPECT_EQ(k.free(), 1u);
    }
  }
}

TEST_F(TrackerServiceTest, GivenMaxAgentsRegistered_AnotherAgentShouldBeRefusedUntilOneLeaves) {
  StartTracker("", 15, /*max_agents=*/2);
  auto first = Agent("pocl");
  auto second = Agent("pocl");
  TestAgent third(target_, "pocl", "", TestAgent::Mode::kAnswer, "fp-third");
  EXPECT_EQ(third.WaitRegistered(), "");
  const grpc::Status refused = third.WaitEnded();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(refused.error_message(), "the tracker serves at most 2 agents at once (--max-agents)");

  first->Kill();
  first->WaitEnded();
  // The tracker forgets the agent when its stream ends; a new one may then register.
  std::string id;
  for (int attempt = 0; attempt < 100 && id.empty(); ++attempt) {
    TestAgent again(target_, "pocl", "", TestAgent::Mode::kAnswer, "fp-again");
    id = again.WaitRegistered();
    if (id.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(id.empty());
}

TEST_F(TrackerServiceTest, GivenNoAgentForTheKey_AcquireShouldFailAfterTheWait) {
  StartTracker();
  auto client = Client();
  auto lease = client->Acquire("nope", 1, 0, 0, 0.3, "test");
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.status().code(), Status::Code::kNotFound);
  EXPECT_NE(lease.status().message().find("no agent for key 'nope' after 0.3 s (0 registered)"), std::string::npos)
      << lease.status().message();
}

TEST_F(TrackerServiceTest, GivenABusyKey_AWaitingAcquireShouldBeGrantedWhenTheLeaseIsReleased) {
  StartTracker();
  auto agent = Agent("pocl");
  auto client = Client();
  auto first = client->Acquire("pocl", 1, 0, 0, 5, "first");
  ASSERT_TRUE(first.ok());
  auto busy = client->Acquire("pocl", 1, 0, 0, 0.2, "impatient");
  EXPECT_EQ(busy.status().code(), Status::Code::kDeadlineExceeded);
  EXPECT_TRUE(busy.status().message().ends_with(": every agent of key 'pocl' (1) stayed leased for 0.2 s (the "
                                                "client's wait; tune --wait, measure --wait); leased at its end by "
                                                "'first'"))
      << busy.status().message();
  // A wait of 0 is no wait ("for 0.0 s" read as one that ran out).
  auto now = client->Acquire("pocl", 1, 0, 0, 0, "now");
  EXPECT_TRUE(now.status().message().ends_with(": every agent of key 'pocl' (1) is leased (the client asked not to "
                                               "wait; tune --wait, measure --wait); leased by 'first'"))
      << now.status().message();
  const std::string nobody = client->Acquire("nope", 1, 0, 0, 0, "now").status().message();
  EXPECT_TRUE(nobody.ends_with(": no agent for key 'nope' (0 registered)")) << nobody;

  auto second = std::async(std::launch::async, [&] { return client->Acquire("pocl", 1, 0, 0, 60, "second"); });
  // Release once the second request is queued, so the grant can only come from the release.
  while (true) {
    auto s = client->Summary();
    ASSERT_TRUE(s.ok());
    if (s->keys_size() == 1 && s->keys(0).waiting() == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // A run that gives up behind another says so: the device would have gone to that one first.
  auto behind = client->Acquire("pocl", 1, 0, 0, 0.2, "behind");
  EXPECT_NE(behind.status().message().find("; leased at its end by 'first'; 1 run waited ahead of this one"),
            std::string::npos)
      << behind.status().message();
  ASSERT_TRUE(client->Release(*first).ok());
  auto granted = second.get();
  ASSERT_TRUE(granted.ok()) << granted.status().ToString();
  EXPECT_EQ(granted->devices.size(), 1u);
  EXPECT_FALSE(client->Renew(*first).ok());  // released leases are gone
  EXPECT_TRUE(client->Renew(*granted).ok());
}

// A lease of two devices whose idle agent goes away: no job of it comes back lost, so the run learns it from the
// renewals, which say how many agents the lease still holds.
TEST_F(TrackerServiceTest, GivenALeasedAgentThatGoesAwayIdle_TheRenewalShouldSayTheDevicesLeft) {
  StartTracker();
  auto one = Agent("pocl");
  auto two = Agent("pocl");
  auto client = Client();
  auto lease = client->Acquire("pocl", 2, 2, 0, 30, "run");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  auto renewed = client->Renew(*lease);
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(*renewed, 2u);
  two->Kill();
  for (int i = 0; i < 500 && renewed.ok() && *renewed == 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    renewed = client->Renew(*lease);
  }
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(*renewed, 1u);
}

// Over the wire: a request that says it has waited 30 s already goes before one queued before it that has not (a
// run whose device was lost asks again every 10 s; it went behind every run that had come meanwhile).
TEST_F(TrackerServiceTest, GivenARequestThatHasWaitedBefore_ItShouldBeGrantedBeforeALaterComer) {
  StartTracker();
  auto agent = Agent("pocl");
  auto client = Client();
  auto held = client->Acquire("pocl", 1, 0, 0, 5, "holder");
  ASSERT_TRUE(held.ok());
  auto waiting = [&](int n) {
    while (true) {
      auto s = client->Summary();
      ASSERT_TRUE(s.ok());
      if (s->keys_size() == 1 && s->keys(0).waiting() == static_cast<uint32_t>(n)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  auto newcomer = std::async(std::launch::async, [&] { return client->Acquire("pocl", 1, 0, 0, 60, "newcomer"); });
  waiting(1);
  auto again = std::async(std::launch::async, [&] { return client->Acquire("pocl", 1, 0, 0, 60, "again", 30); });
  waiting(2);
  // `query` shows the queue in the order it will be served, with how long each has waited.
  auto summary = client->Summary();
  ASSERT_TRUE(summary.ok());
  ASSERT_EQ(summary->keys(0).queue_size(), 2);
  EXPECT_EQ(summary->keys(0).queue(0).client(), "again");
  EXPECT_GE(summary->keys(0).queue(0).waited_s(), 30.0);
  EXPECT_EQ(summary->keys(0).queue(1).client(), "newcomer");
  EXPECT_LT(summary->keys(0).queue(1).waited_s(), 30.0);
  ASSERT_TRUE(client->Release(*held).ok());
  auto first = again.get();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(newcomer.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "the newcomer was granted the one device too";
  ASSERT_TRUE(client->Release(*first).ok());
  auto second = newcomer.get();
  EXPECT_TRUE(second.ok()) << second.status().ToString();
}

TEST_F(TrackerServiceTest, GivenASilentAgent_WeShouldDropItAfterTheHeartbeatTimeout) {
  StartTracker("", /*heartbeat_timeout=*/0.5);
  auto silent = Agent("pocl", TestAgent::Mode::kSilent);
  // The tracker ends the stream of an agent that sends nothing (no heartbeat) for the timeout.
  silent->WaitEnded();
  auto summary = Client()->Summary();
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->agents_size(), 0);
}

TEST_F(TrackerServiceTest, GivenOpenStreamsAndAWaitingAcquire_ShutdownShouldEndThemAll) {
  StartTracker();
  auto agent = Agent("pocl");
  auto client = Client();
  auto held = client->Acquire("pocl", 1, 0, 0, 5, "holder");
  ASSERT_TRUE(held.ok());
  auto waiting = std::async(std::launch::async, [&] { return client->Acquire("pocl", 1, 0, 0, 600, "waiter"); });
  while (true) {
    auto s = client->Summary();
    ASSERT_TRUE(s.ok());
    if (s->keys_size() == 1 && s->keys(0).waiting() == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  server_->Shutdown(5);
  EXPECT_FALSE(waiting.get().ok());  // ended by the shutdown, not by its 600 s wait
  agent->WaitEnded();
}

// Before the token is checked, so anyone can send it: 200 such streams wrote 200 warnings. One is said a minute.
TEST_F(TrackerServiceTest, GivenFirstMessagesThatAreNotRegisterAgent_WeShouldDropThePeersSayingItOnce) {
  testing::CapturedSpdlog log;
  StartTracker("s3cret");
  auto channel = grpc::CreateChannel(target_, grpc::InsecureChannelCredentials());
  auto stub = proto::Tracker::NewStub(channel);
  for (int i = 0; i < 20; ++i) {
    grpc::ClientContext ctx;
    auto stream = stub->AgentSession(&ctx);
    proto::AgentMessage hb;
    hb.mutable_heartbeat();
    stream->Write(hb);
    proto::TrackerMessage m;
    EXPECT_FALSE(stream->Read(&m));
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  server_.reset();  // its threads stopped: the log is read whole
  const std::string text = log.text();
  size_t lines = 0;
  for (size_t at = text.find("first message is not RegisterAgent"); at != std::string::npos;
       at = text.find("first message is not RegisterAgent", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << text;
}

// A bare AgentSession stream, for what TestAgent does not do: send nothing, send an outsized RegisterAgent, stop
// reading. Its deadline bounds a test whose tracker never ends the stream.
struct RawAgentStream {
  explicit RawAgentStream(const std::string& target) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    stub = proto::Tracker::NewStub(grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    stream = stub->AgentSession(&ctx);
  }
  // Sends RegisterAgent of `key` and reads the tracker's Registered (call it in ASSERT_NO_FATAL_FAILURE).
  void Register(const std::string& key) {
    proto::AgentMessage hello;
    hello.mutable_register_()->set_key(key);
    ASSERT_TRUE(stream->Write(hello));
    proto::TrackerMessage m;
    ASSERT_TRUE(stream->Read(&m));
    ASSERT_TRUE(m.has_registered());
  }
  std::unique_ptr<proto::Tracker::Stub> stub;
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReaderWriter<proto::AgentMessage, proto::TrackerMessage>> stream;
};

// An agent that leaves for a reason (its disk is full) says it, and the tracker's log gives it (escaped).
TEST_F(TrackerServiceTest, GivenAnAgentThatLeavesForAReason_TheLogShouldSayIt) {
  testing::CapturedSpdlog log;
  StartTracker();
  RawAgentStream agent(target_);
  ASSERT_NO_FATAL_FAILURE(agent.Register("k"));
  proto::AgentMessage bye;
  bye.mutable_leaving()->set_reason("the disk is full (/c has 0 bytes free)\x1b[2J");
  ASSERT_TRUE(agent.stream->Write(bye));
  proto::TrackerMessage m;
  EXPECT_FALSE(agent.stream->Read(&m));
  server_.reset();
  EXPECT_NE(log.text().find("left: the disk is full (/c has 0 bytes free)\\x1b[2J"), std::string::npos) << log.text();
}

TEST_F(TrackerServiceTest, GivenAStreamThatNeverRegisters_WeShouldCancelItAtTheRegisterDeadline) {
  StartTracker("s3cret", /*heartbeat_timeout=*/0.5, /*max_agents=*/2);  // also the deadline for RegisterAgent
  const auto start = std::chrono::steady_clock::now();
  RawAgentStream idle(target_);
  proto::TrackerMessage m;
  EXPECT_FALSE(idle.stream->Read(&m));
  EXPECT_EQ(idle.stream->Finish().error_code(), grpc::StatusCode::CANCELLED);  // by the tracker, not the deadline
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

TEST_F(TrackerServiceTest, GivenOutsizedDeviceInfoOrClientText_RegisterAndAcquireShouldBeRefused) {
  StartTracker();
  const auto refusal = [&](const proto::RegisterAgent& reg) {
    RawAgentStream agent(target_);
    proto::AgentMessage m;
    *m.mutable_register_() = reg;
    agent.stream->Write(m);
    proto::TrackerMessage reply;
    EXPECT_FALSE(agent.stream->Read(&reply));
    return agent.stream->Finish();
  };
  proto::RegisterAgent reg;
  reg.set_key("pocl");
  reg.mutable_device()->set_extensions(std::string(70 * 1024, 'x'));
  grpc::Status refused = refusal(reg);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused.error_message(), "RegisterAgent's device.extensions is 71680 bytes long (at most 65536)");
  reg.mutable_device()->set_extensions(std::string(60 * 1024, 'x'));  // each string within bounds, the whole not
  for (auto* text : {reg.mutable_device()->mutable_name(), reg.mutable_device()->mutable_vendor(),
                     reg.mutable_device()->mutable_driver_version(), reg.mutable_device()->mutable_fingerprint()}) {
    *text = std::string(60 * 1024, 'y');
  }
  refused = refusal(reg);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("RegisterAgent's device is 30"), std::string::npos) << refused.error_message();
  EXPECT_NE(refused.error_message().find(" bytes long (at most 262144)"), std::string::npos) << refused.error_message();

  auto agent = Agent("pocl");
  auto client = Client();
  auto lease = client->Acquire("pocl", 1, 0, 0, 1, std::string(2000, 'c'));
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(lease.status().message().find("AcquireRequest's client is 2000 bytes long (at most 1024)"),
            std::string::npos)
      << lease.status().message();
  auto summary = client->Summary();
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_EQ(summary->agents_size(), 1);
  EXPECT_EQ(summary->agents(0).state(), "free");  // the refused Acquire holds nothing
}

// An agent that stops reading while its job (larger than what the connection buffers) is being written, so that the
// tracker's write blocks; then `end` makes the tracker remove the agent. The tracker must end the call then, not go
// on writing the job: the job never arrives whole, and the stream ends as cancelled.
void ExpectCancelledMidJob(const std::string& target, TrackerClient* client,
                           const std::function<void(RawAgentStream&)>& end) {
  RawAgentStream agent(target);
  ASSERT_NO_FATAL_FAILURE(agent.Register("pocl"));
  proto::TrackerMessage m;
  auto lease = client->Acquire("pocl", 1, 0, 0, 5, "test");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  std::vector<proto::MeasureJob> jobs(1);
  jobs[0].mutable_program()->add_launches()->set_source(std::string(48 << 20, ' '));
  std::vector<proto::MeasureEvent> events;
  auto measured = std::async(std::launch::async, [&] {
    return client->Measure(lease->lease_id, jobs, [&](const proto::MeasureEvent& e) { events.push_back(e); });
  });
  // Whatever ends this function, the agent's call ends first, so that the Measure above returns (its job lost)
  // and `measured` can be destroyed: a failed ASSERT below must fail the test, not hang it.
  struct CancelFirst {
    RawAgentStream& agent;
    ~CancelFirst() { agent.ctx.TryCancel(); }
  } cancel_first{agent};
  for (int tries = 0;; ++tries) {
    auto s = client->Summary();  // a Summary past its deadline (a slow, sanitized build) is one more try
    if (s.ok() && s->agents_size() == 1 && s->agents(0).state() == "busy") break;
    ASSERT_LT(tries, 100) << "the job was not sent" << (s.ok() ? "" : ": " + s.status().ToString());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the tracker is writing the job
  end(agent);
  ASSERT_TRUE(measured.get().ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].device_lost());

  EXPECT_FALSE(agent.stream->Read(&m)) << "the tracker went on writing a job to an agent it removed";
  EXPECT_EQ(agent.stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(TrackerServiceTest, GivenAnAgentThatStopsReadingAndLeaves_WeShouldCancelItsStreamMidJob) {
  StartTracker();
  auto client = Client();
  ExpectCancelledMidJob(target_, client.get(), [](RawAgentStream& agent) {
    proto::AgentMessage bye;
    bye.mutable_leaving();
    ASSERT_TRUE(agent.stream->Write(bye));
  });
}

// The agent keeps its stream open and says nothing more: the tracker drops it at the heartbeat timeout.
TEST_F(TrackerServiceTest, GivenAnAgentThatStopsReadingAndFallsSilent_WeShouldCancelItsStreamMidJob) {
  StartTracker("", /*heartbeat_timeout=*/2);
  auto client = Client();
  ExpectCancelledMidJob(target_, client.get(), [](RawAgentStream&) {});
}

}  // namespace
}  // namespace tunefleet::tracker

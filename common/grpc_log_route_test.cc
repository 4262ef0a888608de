// GrpcLogRoute with the real gRPC library: gpr_log lines reach spdlog's default logger while a route lives, and
// nothing when the route is gone or when the CLI's mode was not asked for them.
#include "common/grpc_log_route.h"

#include <grpc/support/log.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <spdlog/sinks/base_sink.h>

#include <atomic>
#include <cstdlib>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace tunefleet {
namespace {

int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class GrpcLogRouteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("GRPC_VERBOSITY");
    gpr_set_log_verbosity(GPR_LOG_SEVERITY_ERROR);  // what grpc_init() sets when GRPC_VERBOSITY is unset
    previous_ = spdlog::default_logger();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    auto logger = std::make_shared<spdlog::logger>("route-test", sink);
    logger->set_pattern("[%l] %v");
    spdlog::set_default_logger(logger);
  }
  void TearDown() override {
    unsetenv("GRPC_VERBOSITY");
    spdlog::set_default_logger(previous_);
  }

  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(GrpcLogRouteTest, GivenARouteToShowGrpcErrorsShouldReachTheDefaultLoggerAsOneLineNamingTheSource) {
  {
    GrpcLogRoute route(GrpcLogRoute::Mode::kShow);
    gpr_log(GPR_ERROR, "Handshake failed with fatal error %s", "SSL_ERROR_SSL");
  }
  const int line = __LINE__ - 2;
  EXPECT_EQ(out_.str(), "[error] grpc: Handshake failed with fatal error SSL_ERROR_SSL (grpc_log_route_test.cc:" +
                            std::to_string(line) + ")\n");
}

// gRPC's threads outlive main's route (a handshake given up on still fails as the process exits): what they say
// then reaches neither the log nor stderr in gRPC's own format.
TEST_F(GrpcLogRouteTest, GivenTheRouteGoneGrpcLinesShouldBeDropped) {
  { GrpcLogRoute route(GrpcLogRoute::Mode::kShow); }
  ::testing::internal::CaptureStderr();
  gpr_log(GPR_ERROR, "after the route");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(GrpcLogRouteTest, GivenTheCliModeGrpcLinesShouldShowOnlyWhenGrpcVerbosityIsSet) {
  {
    GrpcLogRoute route(GrpcLogRoute::Mode::kOnlyWhenAsked);
    gpr_log(GPR_ERROR, "not asked for");
  }
  EXPECT_EQ(out_.str(), "");
  setenv("GRPC_VERBOSITY", "ERROR", 1);
  {
    GrpcLogRoute route(GrpcLogRoute::Mode::kOnlyWhenAsked);
    gpr_log(GPR_ERROR, "asked for");
  }
  EXPECT_NE(out_.str().find("[error] grpc: asked for ("), std::string::npos) << out_.str();
}

TEST_F(GrpcLogRouteTest, GivenGrpcInfoLinesTheyShouldReadAsInfo) {
  gpr_set_log_verbosity(GPR_LOG_SEVERITY_INFO);
  {
    GrpcLogRoute route(GrpcLogRoute::Mode::kShow);
    gpr_log(GPR_INFO, "channel connectivity");
  }
  EXPECT_NE(out_.str().find("[info] grpc: channel connectivity ("), std::string::npos) << out_.str();
}

TEST_F(GrpcLogRouteTest, GivenAFloodOfLinesFromOnePlaceTheRouteShouldShowOneAndCountTheRest) {
  {
    GrpcLogRoute route(GrpcLogRoute::Mode::kShow, std::chrono::milliseconds(300));
    auto handshake_failed = [] { gpr_log(GPR_ERROR, "Handshake failed"); };
    for (int i = 0; i < 100; ++i) handshake_failed();
    gpr_log(GPR_ERROR, "another place");  // its own line, not held back by the flood
    std::this_thread::sleep_for(std::chrono::milliseconds(350));
    handshake_failed();
  }
  const std::string out = out_.str();
  EXPECT_EQ(CountOf(out, "[error] grpc: Handshake failed ("), 2) << out;
  EXPECT_EQ(CountOf(out, "[error] grpc: another place ("), 1) << out;
  EXPECT_NE(out.find("; 99 more from there held back since the last one shown\n"), std::string::npos) << out;
}

// A sink whose first line blocks until it is let go: a gRPC thread caught in the middle of saying a line.
class HoldingSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::promise<void> entered, release;

 protected:
  void sink_it_(const spdlog::details::log_msg&) override {
    if (held_) return;
    held_ = true;
    entered.set_value();
    release_future_.wait();
  }
  void flush_() override {}

 private:
  bool held_ = false;
  std::shared_future<void> release_future_ = release.get_future().share();
};

// A gRPC thread may still be saying a line through the route when main's route is destroyed at exit: the destructor
// waits for it (it went on, and the thread then used the freed route).
TEST_F(GrpcLogRouteTest, GivenAGrpcThreadSayingALineTheRouteShouldOutliveTheCall) {
  auto sink = std::make_shared<HoldingSink>();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("holding", sink));
  auto route = std::make_unique<GrpcLogRoute>(GrpcLogRoute::Mode::kShow);
  std::thread grpc_thread([] { gpr_log(GPR_ERROR, "said as the process exits"); });
  sink->entered.get_future().wait();
  std::atomic<bool> destroyed{false};
  std::thread main_exiting([&] {
    route.reset();
    destroyed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(destroyed) << "the route was destroyed while a call was still in it";
  sink->release.set_value();
  grpc_thread.join();
  main_exiting.join();
  EXPECT_TRUE(destroyed);
}

// The watcher sees every message, the ones the throttle holds back too (the tracker watches for a failed accept), and
// none once it is replaced by an empty one.
TEST_F(GrpcLogRouteTest, GivenAWatcherItShouldSeeEveryMessageUntilItIsCleared) {
  GrpcLogRoute route(GrpcLogRoute::Mode::kShow, std::chrono::hours(1));
  std::vector<std::string> seen;
  route.Watch([&seen](const std::string& message) { seen.push_back(message); });
  for (int i = 0; i < 3; ++i) gpr_log(GPR_ERROR, "Failed accept4: %s", "Too many open files");
  route.Watch(nullptr);
  gpr_log(GPR_ERROR, "after the watch");
  EXPECT_EQ(seen, std::vector<std::string>(3, "Failed accept4: Too many open files"));
  EXPECT_EQ(CountOf(out_.str(), "Failed accept4"), 1) << out_.str();  // the log itself stays throttled
}

}  // namespace
}  // namespace tunefleet

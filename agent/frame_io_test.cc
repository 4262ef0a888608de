#include "agent/frame_io.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tunefleet::agent {
namespace {

class FrameIoTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  int fds_[2] = {-1, -1};
};

TEST_F(FrameIoTest, GivenAWrittenFrame_WeShouldReadItBackWhole) {
  const std::string payload(100000, 'x');
  ASSERT_TRUE(WriteFrame(fds_[0], FrameKind::kJob, "first").ok());
  Result<Frame> first = ReadFrame(fds_[1]);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->kind, FrameKind::kJob);
  EXPECT_EQ(first->payload, "first");
  ASSERT_TRUE(WriteFrame(fds_[0], FrameKind::kResult, "").ok());
  Result<Frame> empty = ReadFrame(fds_[1]);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->kind, FrameKind::kResult);
  EXPECT_TRUE(empty->payload.empty());
}

TEST_F(FrameIoTest, GivenAClosedPeer_WeShouldReportUnavailable) {
  close(fds_[0]);
  fds_[0] = -1;
  Result<Frame> frame = ReadFrame(fds_[1]);
  EXPECT_EQ(frame.status().code(), Status::Code::kUnavailable);
  EXPECT_FALSE(WriteFrame(fds_[1], FrameKind::kJob, "x").ok());  // and no SIGPIPE
}

// A frame the peer sent in time, read only after the deadline (the reader was stopped or starved): it is taken. A
// healthy config's result was thrown away as a RUN_TIMEOUT when the agent was late to read it.
TEST_F(FrameIoTest, GivenAFrameWaitingWhenTheDeadlineHasPassed_WeShouldStillReadIt) {
  ASSERT_TRUE(WriteFrame(fds_[0], FrameKind::kResult, "in time").ok());
  Result<Frame> frame = ReadFrame(fds_[1], std::chrono::steady_clock::now() - std::chrono::seconds(5));
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->payload, "in time");
}

TEST_F(FrameIoTest, GivenNoDataBeforeTheDeadline_WeShouldReportDeadlineExceeded) {
  Result<Frame> frame = ReadFrame(fds_[1], std::chrono::steady_clock::now() + std::chrono::milliseconds(20));
  EXPECT_EQ(frame.status().code(), Status::Code::kDeadlineExceeded);
}

TEST_F(FrameIoTest, GivenACancelSignal_WeShouldStopWaiting) {
  int cancel[2];
  ASSERT_EQ(pipe(cancel), 0);
  ASSERT_EQ(write(cancel[1], "x", 1), 1);
  Result<Frame> frame = ReadFrame(fds_[1], std::nullopt, cancel[0]);
  EXPECT_EQ(frame.status().code(), Status::Code::kUnavailable);
  close(cancel[0]);
  close(cancel[1]);
}

TEST_F(FrameIoTest, GivenGarbage_WeShouldReportCorruption) {
  ASSERT_EQ(write(fds_[0], "Zxxxx", 5), 5);
  EXPECT_EQ(ReadFrame(fds_[1]).status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace tunefleet::agent

#include "agent/output_relay.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tunefleet::agent {
namespace {

// The relay over its real pipe; the lines it would log are collected instead.
class OutputRelayTest : public ::testing::Test {
 protected:
  void Start(OutputRelay::Limits limits) {
    Result<std::unique_ptr<OutputRelay>> relay = OutputRelay::Start(limits, [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    });
    ASSERT_TRUE(relay.ok()) << relay.status().ToString();
    relay_ = std::move(relay).value();
  }
  void Write(const std::string& text) {
    ASSERT_EQ(write(relay_->write_fd(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  // Stops the relay (it reads what the pipe holds first) and returns every line it said.
  std::vector<std::string> Stop() {
    relay_.reset();
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

  std::unique_ptr<OutputRelay> relay_;
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST_F(OutputRelayTest, GivenAFewLines_EachShouldBeSaidWithControlCharactersEscaped) {
  Start({});
  Write("item 0\nitem 1\n");
  Write("a \x1b[31mred\x1b[0m one\nno newline at the end");
  const std::vector<std::string> lines = Stop();
  EXPECT_EQ(lines, (std::vector<std::string>{"kernel output: item 0", "kernel output: item 1",
                                             "kernel output: a \\x1b[31mred\\x1b[0m one",
                                             "kernel output: no newline at the end"}));
}

// A worker killed mid-printf leaves its line unended; the supervisor ends it once the worker is reaped, so the next
// worker's first line is a line of its own (it continued the dead worker's).
TEST_F(OutputRelayTest, GivenALineLeftUnendedByAKilledWorker_EndLineShouldSayItBeforeTheNextWorkersLine) {
  Start({});
  Write("item 7 of a kill");
  relay_->EndLine();
  Write("first line of the next worker\n");
  relay_->EndLine();  // nothing left unended: says nothing
  const std::vector<std::string> lines = Stop();
  EXPECT_EQ(lines, (std::vector<std::string>{"kernel output: item 7 of a kill",
                                             "kernel output: first line of the next worker"}));
}

// One printf per work-item: past the window's bytes, one line says so, the rest is counted, and the count is said
// when the relay stops.
TEST_F(OutputRelayTest, GivenMoreThanTheWindowTakes_TheRestShouldBeCountedNotSaid) {
  Start({.bytes_per_window = 100, .window = std::chrono::minutes(1), .line_bytes = 1024});
  std::string flood;
  for (int i = 0; i < 1000; ++i) flood += "item " + std::to_string(1000 + i) + "\n";  // 10 bytes a line
  Write(flood);
  const std::vector<std::string> lines = Stop();
  ASSERT_EQ(lines.size(), 12u);
  EXPECT_EQ(lines[0], "kernel output: item 1000");
  EXPECT_EQ(lines[9], "kernel output: item 1009");
  EXPECT_EQ(lines[10],
            "kernel output: more than 100 bytes in 60.0 s; the rest of it is left out of the log and counted");
  EXPECT_EQ(lines[11], "kernel output: 9900 bytes more were left out");
}

// A new window takes lines again, after the count of the last one.
TEST_F(OutputRelayTest, GivenANewWindow_LinesShouldBeSaidAgain) {
  Start({.bytes_per_window = 20, .window = std::chrono::milliseconds(200), .line_bytes = 1024});
  Write("item 1000\nitem 1001\nitem 1002\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Write("item 1003\n");
  const std::vector<std::string> lines = Stop();
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "kernel output: item 1000", "kernel output: item 1001",
                       "kernel output: more than 20 bytes in 0.2 s; the rest of it is left out of the log and counted",
                       "kernel output: 10 bytes more were left out", "kernel output: item 1003"}));
}

// A line without an end is kept to its first line_bytes; its length is said.
TEST_F(OutputRelayTest, GivenALineLongerThanTheLimit_ItShouldBeCutAndItsLengthSaid) {
  Start({.bytes_per_window = 1 << 20, .window = std::chrono::minutes(1), .line_bytes = 8});
  Write(std::string(5000, 'x') + "\nshort\n");
  const std::vector<std::string> lines = Stop();
  EXPECT_EQ(lines, (std::vector<std::string>{"kernel output: xxxxxxxx... (5000 bytes)", "kernel output: short"}));
}

// Once a line is left out the rest of the window is, a shorter later one too (the log had gaps, not a cut); a line
// longer than line_bytes counts as what is said of it.
TEST_F(OutputRelayTest, GivenALineLeftOut_LaterShorterLinesOfTheWindowShouldBeLeftOutToo) {
  Start({.bytes_per_window = 30, .window = std::chrono::minutes(1), .line_bytes = 8});
  Write(std::string(5000, 'a') + "\n");  // counts 9 bytes: 8 said and its newline
  Write(std::string(15, 'b') + "\n");    // counts 9: 18
  Write(std::string(30, 'c') + "\n");    // 27
  Write("dddd\n");                       // 32 > 30: left out
  Write("e\n");                          // would fit (29), left out all the same
  const std::vector<std::string> lines = Stop();
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "kernel output: aaaaaaaa... (5000 bytes)", "kernel output: bbbbbbbb... (15 bytes)",
                       "kernel output: cccccccc... (30 bytes)",
                       "kernel output: more than 30 bytes in 60.0 s; the rest of it is left out of the log and counted",
                       "kernel output: 7 bytes more were left out"}));
}

}  // namespace
}  // namespace tunefleet::agent

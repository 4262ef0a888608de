#include "common/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace tunefleet {
namespace {

TEST(PrintableTest, GivenControlCharactersTheyShouldBeShownEscapedNotSent) {
  EXPECT_EQ(Printable("GPU\x1b[2J\x07\nfake row\x7f"), "GPU\\x1b[2J\\x07\\x0afake row\\x7f");
}

TEST(PrintableTest, GivenC1ControlsAndBidiOverridesTheyShouldBeShownEscaped) {
  EXPECT_EQ(Printable("a\xc2\x9b" "31mb \xe2\x80\xaeRTL \xe2\x81\xa6x"),
            "a\\xc2\\x9b31mb \\xe2\\x80\\xaeRTL \\xe2\\x81\\xa6x");
  EXPECT_EQ(Printable("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");  // letters and signs stay
}

TEST(PrintableTest, GivenPlainTextAndUtf8ItShouldBeUnchanged) {
  EXPECT_EQ(Printable("NVIDIA H200 \xc3\xa9"), "NVIDIA H200 \xc3\xa9");
}

// A file's bytes quoted in a message (`measure --program` of a file that is not UTF-8) went out as they were.
TEST(PrintableTest, GivenBytesThatAreNotUtf8TheyShouldBeEscapedAndTheUtf8AroundThemKept) {
  EXPECT_EQ(Printable("a\xff b\xc3 \xe2\x82 \xed\xa0\x80 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
            "a\\xff b\\xc3 \\xe2\\x82 \\xed\\xa0\\x80 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(Printable("\xc3\xa9\xc3", 3), "\xc3\xa9\\xc3");  // a sequence cut short: its first byte escaped
}

TEST(PrintableTest, GivenAsciiOnlyEveryByteOutsidePrintableAsciiShouldBeEscaped) {
  EXPECT_EQ(Printable("ok \xff\xc3\xa9\n", 200, PrintableBytes::kAsciiOnly), "ok \\xff\\xc3\\xa9\\x0a");
}

TEST(PrintableTest, GivenTextLongerThanTheLimitItShouldBeCutWithItsLength) {
  EXPECT_EQ(Printable(std::string(1000000, 'a'), 4), "aaaa... (1000000 bytes)");
}

}  // namespace
}  // namespace tunefleet

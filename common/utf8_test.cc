#include "common/utf8.h"

#include <string>

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

TEST(Utf8Test, GivenAsciiAndWellFormedSequences_ItShouldAcceptThem) {
  EXPECT_TRUE(IsUtf8(""));
  EXPECT_TRUE(IsUtf8("token-123"));
  EXPECT_TRUE(IsUtf8("gr\xc3\xbc\xc3\x9f"));           // two-byte
  EXPECT_TRUE(IsUtf8("\xe2\x82\xac"));                 // U+20AC, three bytes
  EXPECT_TRUE(IsUtf8("\xf0\x9f\x98\x80 and \xf4\x8f\xbf\xbf"));  // U+1F600 and U+10FFFF
}

TEST(Utf8Test, GivenMalformedBytes_ItShouldRefuseThem) {
  EXPECT_FALSE(IsUtf8("\xff"));
  EXPECT_FALSE(IsUtf8("abc\x80"));               // a continuation byte alone
  EXPECT_FALSE(IsUtf8("\xc3"));                  // cut short
  EXPECT_FALSE(IsUtf8("\xe2\x82"));              // cut short
  EXPECT_FALSE(IsUtf8("\xc3\x28"));              // a second byte that is no continuation
  EXPECT_FALSE(IsUtf8("\xc0\xaf"));              // overlong '/'
  EXPECT_FALSE(IsUtf8("\xed\xa0\x80"));          // a surrogate, U+D800
  EXPECT_FALSE(IsUtf8("\xf4\x90\x80\x80"));      // past U+10FFFF
  EXPECT_FALSE(IsUtf8(std::string("a\0\xfe", 3)));
}

// A cut is made between characters: "é" is two bytes, "—" three.
TEST(Utf8Test, GivenACutInsideACharacter_Utf8HeadShouldEndBeforeIt) {
  EXPECT_EQ(Utf8Head("abc", 10), "abc");
  EXPECT_EQ(Utf8Head("abc", 2), "ab");
  EXPECT_EQ(Utf8Head("x\xc3\xa9y", 2), "x");
  EXPECT_EQ(Utf8Head("x\xc3\xa9y", 3), "x\xc3\xa9");
  EXPECT_EQ(Utf8Head("\xe2\x80\x94\xe2\x80\x94", 5), "\xe2\x80\x94");
  EXPECT_EQ(Utf8Head("a\x9f" "b", 2), "a\x9f");  // a byte that is not UTF-8 counts as one
}

}  // namespace
}  // namespace tunefleet

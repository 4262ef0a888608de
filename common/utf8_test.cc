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

}  // namespace
}  // namespace tunefleet

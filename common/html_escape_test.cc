#include "common/html_escape.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace {

TEST(HtmlEscapeTest, GivenMarkupAndControlCharacters_TheyShouldBeEscaped) {
  EXPECT_EQ(HtmlEscape("<script>alert('x' & \"y\")</script>"),
            "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("a\x1b[31mb\x7f\tc\n"), "a\\x1b[31mb\\x7f\tc\n");
}

// The page declares UTF-8: characters of it are kept, bytes that are not UTF-8 (a device name of another encoding,
// a character cut in two) are shown as \xNN.
TEST(HtmlEscapeTest, GivenBytesThatAreNotUtf8_TheyShouldBeShownAsEscapesAndUtf8Kept) {
  EXPECT_EQ(HtmlEscape("Mali\xe2\x80\x94G78 \xc3\xa9"), "Mali\xe2\x80\x94G78 \xc3\xa9");
  EXPECT_EQ(HtmlEscape("gpu\x9f\xc3"), "gpu\\x9f\\xc3");
  EXPECT_EQ(HtmlEscape("\xc3(x"), "\\xc3(x");
}

// A device name with U+202E (right-to-left override) reordered the text after it on the status page; C1 controls
// (U+009B, read by some terminals as an escape) passed too. Both are shown as Printable shows them.
TEST(HtmlEscapeTest, GivenBidirectionalOverridesAndC1Controls_TheyShouldBeShownAsEscapes) {
  EXPECT_EQ(HtmlEscape("evil\u202edeen"), "evil\\xe2\\x80\\xaedeen");
  EXPECT_EQ(HtmlEscape("a\u2066b\u2069"), "a\\xe2\\x81\\xa6b\\xe2\\x81\\xa9");
  EXPECT_EQ(HtmlEscape("x\xc2\x9b" "2Jy"), "x\\xc2\\x9b2Jy");
  EXPECT_EQ(HtmlEscape("\u2014 \u00e9"), "\u2014 \u00e9");  // other characters are kept
}

}  // namespace
}  // namespace tunefleet

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

}  // namespace
}  // namespace tunefleet

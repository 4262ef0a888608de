#include "common/cli_checks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/cli_error_text.h"

namespace tunefleet::cli {
namespace {

// What `check` says of `text`: empty when it takes it.
std::string Says(CLI::Validator check, std::string text) { return check(text); }

// A tool with one whole-number option of each kind, guarded as ParseCommandLine guards every tool's.
struct Tool {
  CLI::App app{"tool", "tool"};
  int port = 0;
  unsigned count = 0;
  int64_t offset = 0;
  uint64_t seed = 0;
  std::vector<unsigned> sizes;
  Tool() {
    app.add_option("--port", port, "port")->check(WholeBetween(0, 65535));
    app.add_option("--count", count, "count");
    app.add_option("--offset", offset, "offset");
    app.add_option("--seed", seed, "seed");
    app.add_option("--sizes", sizes, "sizes")->delimiter(',');
    GuardWholeNumbers(app);
  }
  // The error line's text for `args`; empty when they parse.
  std::string Error(std::vector<std::string> args) {
    std::vector<char*> argv{const_cast<char*>("tool")};
    for (std::string& a : args) argv.push_back(a.data());
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      return ErrorText(app, e);
    }
    return "";
  }
};

TEST(CliChecksTest, GivenAWholeNumberNotInPlainDecimal_WeShouldRefuseItRatherThanReadItAsOctalOrHex) {
  // CLI11 read these with base 0: "045667" as 19383, "0x4c03" as 19459, "010" as 8.
  for (const std::string text : {"045667", "0x4c03", "0X10", "0b1", "1e3", "0010", "00", "-00", "+05", "-010", " 5",
                                 "5 ", "", "-", "+", "1.0", "abc"}) {
    const std::string want = "expected a whole number in decimal digits, got '" + text + "'";
    EXPECT_EQ(Tool().Error({"--count", text}), "--count: " + want) << text;
    EXPECT_EQ(Tool().Error({"--offset", text}), "--offset: " + want) << text;
    EXPECT_EQ(Tool().Error({"--seed", text}), "--seed: " + want) << text;
  }
  EXPECT_EQ(Tool().Error({"--sizes", "4,010"}), "--sizes: expected a whole number in decimal digits, got '010'");
}

TEST(CliChecksTest, GivenAWholeNumberInPlainDecimal_WeShouldTakeItAsWritten) {
  Tool tool;
  EXPECT_EQ(tool.Error({"--count", "45667", "--offset", "-0", "--seed", "0", "--sizes", "0,10,+5"}), "");
  EXPECT_EQ(tool.count, 45667u);
  EXPECT_EQ(tool.offset, 0);
  EXPECT_EQ(tool.seed, 0u);
  EXPECT_EQ(tool.sizes, (std::vector<unsigned>{0, 10, 5}));
  Tool signs;  // CLI11 takes a leading +; "-0" of an unsigned option is 0
  EXPECT_EQ(signs.Error({"--count", "+5", "--offset", "-19443", "--seed", "-0"}), "");
  EXPECT_EQ(signs.count, 5u);
  EXPECT_EQ(signs.offset, -19443);
  EXPECT_EQ(signs.seed, 0u);
}

TEST(CliChecksTest, GivenAWholeNumberPastItsType_WeShouldStillSayWhy) {
  EXPECT_EQ(Tool().Error({"--seed", "-1"}), "--seed: expected a whole number of 0 or more, got '-1'");
  EXPECT_EQ(Tool().Error({"--seed", "18446744073709551616"}),
            "--seed: expected a whole number that fits in 64 bits, got '18446744073709551616'");
  EXPECT_EQ(Tool().Error({"--offset", "-9223372036854775809"}),
            "--offset: expected a whole number that fits in 64 bits, got '-9223372036854775809'");
}

// Text that is no whole number is said so, without the type's range: "from 0 to ..." of --batch 0x10 read as if 0
// were allowed, where a check that follows refuses it.
TEST(CliChecksTest, GivenAWholeOfAType_WeShouldSayItsRangeOnlyOfANumberPastIt) {
  EXPECT_EQ(Says(Whole<uint32_t>(), "16"), "");
  EXPECT_EQ(Says(Whole<uint32_t>(), "0x10"), "expected a whole number in decimal digits, got '0x10'");
  EXPECT_EQ(Says(Whole<uint32_t>(), "2.5"), "expected a whole number in decimal digits, got '2.5'");
  EXPECT_EQ(Says(Whole<uint32_t>(), "4294967296"), "expected a whole number from 0 to 4294967295, got '4294967296'");
  EXPECT_EQ(Says(Whole<int32_t>(), "-2147483649"),
            "expected a whole number from -2147483648 to 2147483647, got '-2147483649'");
}

TEST(CliChecksTest, GivenAWholeBetween_WeShouldTakeItsBoundsAndRefuseTheRestInPlainWords) {
  EXPECT_EQ(Says(WholeBetween(0, 65535), "0"), "");
  EXPECT_EQ(Says(WholeBetween(0, 65535), "65535"), "");
  EXPECT_EQ(Says(WholeBetween(0, 65535), "-0"), "");
  EXPECT_EQ(Says(WholeBetween(1, 64), "+64"), "");
  EXPECT_EQ(Says(WholeBetween(-5, 5), "-5"), "");
  EXPECT_EQ(Says(WholeBetween(0, 65535), "65536"), "expected a whole number from 0 to 65535, got '65536'");
  EXPECT_EQ(Says(WholeBetween(1, 100000), "0"), "expected a whole number from 1 to 100000, got '0'");
  EXPECT_EQ(Says(WholeBetween(1, 64), "-1"), "expected a whole number from 1 to 64, got '-1'");
  EXPECT_EQ(Says(WholeBetween(0, 64), "99999999999999999999"),
            "expected a whole number from 0 to 64, got '99999999999999999999'");
  // Not "Value 019443 not in range 0 to 65535" (CLI::Range), nor 0x4c03 taken as 19459.
  EXPECT_EQ(Says(WholeBetween(0, 65535), "019443"), "expected a whole number in decimal digits, got '019443'");
  EXPECT_EQ(Says(WholeBetween(0, 65535), "0x4c03"), "expected a whole number in decimal digits, got '0x4c03'");
  EXPECT_EQ(Says(WholeBetween(1, 100000), "1e3"), "expected a whole number in decimal digits, got '1e3'");
  // Said first, before the guard's own check of the same option.
  EXPECT_EQ(Tool().Error({"--port", "019443"}), "--port: expected a whole number in decimal digits, got '019443'");
  EXPECT_EQ(Tool().Error({"--port", "70000"}), "--port: expected a whole number from 0 to 65535, got '70000'");
}

TEST(CliChecksTest, GivenBetweenWithoutAReason_WeShouldSayTheBoundsAlone) {
  EXPECT_EQ(Says(Between(0, 100), "100"), "");
  EXPECT_EQ(Says(Between(0, 100), "100.5"), "expected a number between 0 and 100, got '100.5'");
  EXPECT_EQ(Says(Between(5, 86400, "a reason"), "1"), "expected a number between 5 and 86400 (a reason), got '1'");
  // Decimal only, as the whole-number options: hexadecimal and blanks were read by strtod.
  EXPECT_EQ(Says(Between(0, 100), "1.5e1"), "");
  EXPECT_EQ(Says(Between(0, 100), "0x3"), "expected a number between 0 and 100, got '0x3'");
  EXPECT_EQ(Says(Between(0, 100), "0x1p1"), "expected a number between 0 and 100, got '0x1p1'");
  EXPECT_EQ(Says(Between(0, 100), " 5"), "expected a number between 0 and 100, got ' 5'");
}

TEST(CliChecksTest, GivenATrackerAddress_WeShouldTakeHostNamesAndValidAddressesOnly) {
  for (const std::string text : {"127.0.0.1:9190", "localhost:9190", "tracker.lab:9190", "[::1]:9190",
                                 "[fe80::1%eth0]:9190", "[::ffff:127.0.0.1]:65535", "10.0.0.255:1"}) {
    EXPECT_EQ(Says(HostPort(), text), "") << text;
  }
  // Digits and dots are an IPv4 address of four numbers: these redialled for ever on "DNS resolution failed".
  for (const std::string text : {"127.0.0.256:19410", "999.1.1.1:19410", "127.1:19410", "010.0.0.1:19410",
                                 "0x7f.0.0.1:19410", "2130706433:19410", "1.2.3.4.:19410"}) {
    EXPECT_EQ(Says(HostPort(), text),
              "expected host:port with an IPv4 address of four numbers from 0 to 255, got '" + text + "'");
  }
  // Brackets go round a valid IPv6 address only.
  for (const std::string text : {"[::1x]:19410", "[1.2.3.4:5]:19410", "[127.0.0.1]:19410", "[localhost]:19410",
                                 "[]:19410", "[::1:19410", "::1]:19410", "[[::1]]:19410", "[fe80::1%]:19410"}) {
    EXPECT_EQ(Says(HostPort(), text), "expected host:port (e.g. 127.0.0.1:9190 or [::1]:9190), got '" + text + "'");
  }
  EXPECT_NE(Says(HostPort(), "localhost:0"), "");
  EXPECT_NE(Says(HostPort(), "localhost"), "");
}

TEST(CliChecksTest, GivenAListenHostWithBrackets_WeShouldTakeThemRoundAnIpv6AddressOnly) {
  for (const std::string text : {"[::1]", "[::]", "[fe80::1%lo]", "::1", "127.0.0.1", "0.0.0.0", "localhost"}) {
    EXPECT_EQ(Says(ListenHost(), text), "") << text;
  }
  for (const std::string text : {"[127.0.0.1]", "[localhost]", "[::1", "::1]", "[::1x]", "[]", "[[::1]]", "[::1]:80"}) {
    EXPECT_EQ(Says(ListenHost(), text),
              "expected brackets only round an IPv6 address (e.g. [::1]), got '" + text + "'");
  }
  EXPECT_EQ(Says(ListenHost(), "127.0.0.1:80"),
            "expected an address without a port (the port goes in --port), got '127.0.0.1:80'");
  EXPECT_EQ(Says(ListenHost(), "127.1"), "expected an IPv4 address of four numbers from 0 to 255, got '127.1'");
}

TEST(CliChecksTest, GivenAnEmptyValue_WeShouldRefuseIt) {
  EXPECT_EQ(Says(NotEmpty(), ""), "the value is empty");
  EXPECT_EQ(Says(NotEmpty(), "s3cr3t"), "");
}

}  // namespace
}  // namespace tunefleet::cli

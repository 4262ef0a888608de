#include "common/cli_error_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tunefleet::cli {
namespace {

// A command shaped like `tunefleet tune`: a subcommand with a required option, a counted option and a positional.
struct Tool {
  CLI::App app{"tool", "tool"};
  std::string key, model;
  int devices = 1;
  Tool() {
    auto* tune = app.add_subcommand("tune", "tune");
    tune->add_option("model", model, "model");
    tune->add_option("--rpc-key", key, "key")->required();
    tune->add_option("--devices", devices, "devices")->check(CLI::PositiveNumber);
    app.require_subcommand(1);
  }
  // The error line's text for `args`; empty (and a failure) when they parse.
  std::string Error(std::vector<std::string> args) {
    std::vector<char*> argv{const_cast<char*>("tool")};
    for (std::string& a : args) argv.push_back(a.data());
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      return ErrorText(app, e);
    }
    ADD_FAILURE() << "parsed";
    return "";
  }
};

TEST(CliErrorTextTest, GivenAnUnknownOptionAndAMissingRequiredOne_WeShouldNameTheUnknownOptionFirst) {
  EXPECT_EQ(Tool().Error({"tune", "--bogus"}), "unknown option '--bogus'");
  EXPECT_EQ(Tool().Error({"tune", "--devices", "0", "--bogus=3"}), "unknown option '--bogus=3'");
  EXPECT_EQ(Tool().Error({"tune", "a.onnx", "b.onnx", "--rpc-key", "k"}), "unexpected argument 'b.onnx'");
  EXPECT_EQ(Tool().Error({"tune", "-x", "--rpc-key", "k", "--nope"}), "unknown option '-x'; unknown option '--nope'");
}

TEST(CliErrorTextTest, GivenNoUnknownOption_WeShouldSayCliElevensComplaint) {
  EXPECT_EQ(Tool().Error({"tune"}), "--rpc-key is required");
}

// CLI11 says "--rpc-key: At Most 1 required but received 2", which reads as if something else were required.
TEST(CliErrorTextTest, GivenAnOptionTwice_WeShouldSayItTakesOneValue) {
  EXPECT_EQ(Tool().Error({"tune", "--rpc-key", "a", "--rpc-key", "b"}),
            "--rpc-key is given 2 times; it takes one value");
  EXPECT_EQ(Tool().Error({"tune", "--rpc-key", "a", "--devices", "1", "--devices", "2", "--devices", "3"}),
            "--devices is given 3 times; it takes one value");
}

TEST(CliErrorTextTest, GivenAValuePastItsType_WeShouldSaySoPlainly) {
  EXPECT_EQ(Tool().Error({"tune", "--rpc-key", "a", "--devices", "99999999999"}),
            "--devices: '99999999999' is not a value it takes (out of its range, or not a number of its kind)");
}

}  // namespace
}  // namespace tunefleet::cli

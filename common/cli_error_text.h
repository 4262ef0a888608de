// The one line that a command-line tool (tunefleet, tunefleet-tracker, tunefleet-agent) says for a command line
// CLI11 refused, in plain words, the most basic fault first.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tunefleet::cli {

// The text of a parse error alone: CLI11's "Could not convert: --x = 9999999999" (a value past the option's type) and
// "--x: At Most 1 required but received 2" (an option given twice) said plainly; any other text as CLI11 has it.
inline std::string ErrorText(const CLI::ParseError& e) {
  const std::string text = e.what();
  const std::string convert = "Could not convert: ";
  if (const size_t eq = text.find(" = "); text.rfind(convert, 0) == 0 && eq != std::string::npos) {
    return text.substr(convert.size(), eq - convert.size()) + ": '" + text.substr(eq + 3) +
           "' is not a value it takes (out of its range, or not a number of its kind)";
  }
  const std::string at_most = ": At Most 1 required but received ";
  if (const size_t at = text.find(at_most); at != std::string::npos && at > 0) {
    return text.substr(0, at) + " is given " + text.substr(at + at_most.size()) + " times; it takes one value";
  }
  return text;
}

// The words left over after parsing `args`, which no option or positional argument of the command takes, as one
// text: "unknown option '--bogus'", "unexpected argument 'b.onnx'", joined by "; ". Empty when there are none.
inline std::string LeftOverText(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& arg : args) {
    const bool option = arg.size() > 1 && arg[0] == '-';
    out += (out.empty() ? "" : "; ") + std::string(option ? "unknown option '" : "unexpected argument '") + arg + "'";
  }
  return out;
}

// The text of a parse error of `app`. CLI11 checks the required options (and the values' validators) before it looks
// for words that nothing takes, so `tunefleet tune --bogus` said "--rpc-key is required": such words come first, since
// a misspelt option is what the command line's other complaints most often follow from.
inline std::string ErrorText(const CLI::App& app, const CLI::ParseError& e) {
  const std::string left_over = LeftOverText(app.remaining(/*recurse=*/true));
  return left_over.empty() ? ErrorText(e) : left_over;
}

}  // namespace tunefleet::cli

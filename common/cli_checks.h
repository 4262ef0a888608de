// Checks for the options of the command-line tools (tunefleet, tunefleet-tracker, tunefleet-agent), each rejecting
// a bad value with one plain line: CLI11's own PositiveNumber prints the whole range of a double, and an unsigned
// option takes "-1" as a huge number unless it is checked first. ParseCommandLine reports a bad option so, and
// refuses for every whole-number option (scalar or list) a value its type would hold wrapped or clamped.
// Thread safety: free functions, no state.
#pragma once

#include <arpa/inet.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "common/cli_error_text.h"
#include "common/device_key.h"
#include "common/printable.h"

namespace tunefleet::cli {

namespace detail {
// The whole of `text` as a finite number, or false.
inline bool ParseNumber(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(value);
}
}  // namespace detail

// A whole number that the option's type T holds ("1.5", "1e3" and a value past T's range are refused, not rounded or
// clamped). Chain it with Positive() or NonNegative() for the sign.
template <typename T>
CLI::Validator Whole() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool negative = !text.empty() && text[0] == '-';
        const std::string digits = text.substr(!text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0);
        bool fits = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
                    (!negative || std::numeric_limits<T>::is_signed);
        if (fits) {
          errno = 0;
          char* end = nullptr;
          if (negative) {
            const long long v = std::strtoll(text.c_str(), &end, 10);
            fits = errno == 0 && v >= static_cast<long long>(std::numeric_limits<T>::min());
          } else {
            const unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
            fits = errno == 0 && v <= static_cast<unsigned long long>(std::numeric_limits<T>::max());
          }
        }
        if (fits) return {};
        return "expected a whole number from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
               std::to_string(std::numeric_limits<T>::max()) + ", got '" + text + "'";
      },
      "", "whole");
}

// A number above 0 (a count, a size, a duration that must pass).
inline CLI::Validator Positive() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        if (!detail::ParseNumber(text, v) || v <= 0) return "expected a number above 0, got '" + text + "'";
        return {};
      },
      "> 0", "positive");
}

// A number of 0 or more (an index, a wait that may be none).
inline CLI::Validator NonNegative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        if (!detail::ParseNumber(text, v) || v < 0) return "expected a number of 0 or more, got '" + text + "'";
        return {};
      },
      ">= 0", "non-negative");
}

// A number above 0 and at most `max` (a duration that must pass and must fit a clock: a lease's time to live).
inline CLI::Validator PositiveAtMost(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        double v = 0;
        if (!detail::ParseNumber(text, v) || v <= 0 || v > max) {
          char bound[32];
          std::snprintf(bound, sizeof bound, "%g", max);
          return "expected a number above 0 and at most " + std::string(bound) + ", got '" + text + "'";
        }
        return {};
      },
      "> 0", "positive-at-most");
}

// A number from `min` to `max`; `why` says where the lower bound comes from.
inline CLI::Validator Between(double min, double max, const std::string& why) {
  return CLI::Validator(
      [min, max, why](std::string& text) -> std::string {
        double v = 0;
        if (!detail::ParseNumber(text, v) || v < min || v > max) {
          char bounds[64];
          std::snprintf(bounds, sizeof bounds, "%g and %g", min, max);
          return "expected a number between " + std::string(bounds) + " (" + why + "), got '" + text + "'";
        }
        return {};
      },
      "", "between");
}

// A host to listen on: not empty, and without a port ("127.0.0.1:80"; an IPv6 address holds several colons).
inline CLI::Validator ListenHost() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "expected an address, got ''";
        const size_t colon = text.find(':');
        const bool one_colon = colon != std::string::npos && text.find(':', colon + 1) == std::string::npos;
        if (one_colon && text.find(']') == std::string::npos)
          return "expected an address without a port (the port goes in --port), got '" + text + "'";
        // Digits and dots are meant as an IPv4 address; a resolver would look such a text up as a name. And the
        // resolver reads the old forms inet_aton reads ("127.1", "0x7f.0.0.1", "2130706433", "010.0.0.1" octal) as
        // some address, which a listener's log would not show as given: only four decimal numbers are taken.
        in_addr v4{};
        const bool dotted_quad = inet_pton(AF_INET, text.c_str(), &v4) == 1;
        if (!dotted_quad &&
            (text.find_first_not_of("0123456789.") == std::string::npos || inet_aton(text.c_str(), &v4) != 0))
          return "expected an IPv4 address of four numbers from 0 to 255, got '" + text + "'";
        return {};
      },
      "ADDRESS", "listen-host");
}

// A value that is not empty: an empty string would read as the option not given at all (`--template ""` as every
// template), so it is refused rather than ignored.
inline CLI::Validator NotEmpty() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "the value is empty" : std::string(); }, "",
      "not-empty");
}

// A device key (common/device_key.h).
inline CLI::Validator DeviceKey() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (auto problem = DeviceKeyProblem(text)) return "the key " + *problem;
        return {};
      },
      "KEY", "device-key");
}

// host:port with a port of digits from 1 to 65535 (a tracker's address; an IPv6 host in brackets, [::1]:9190, and
// only an IPv6 host: gRPC cannot parse "[127.0.0.1]:9190"). No spaces: gRPC took "127.0.0.1: 9190" and failed later.
inline CLI::Validator HostPort() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string bad = "expected host:port (e.g. 127.0.0.1:9190 or [::1]:9190), got '" + text + "'";
        const size_t colon = text.rfind(':');
        if (colon == std::string::npos || colon == 0) return bad;
        const std::string host = text.substr(0, colon), port = text.substr(colon + 1);
        for (char c : text) {
          if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return bad;
        }
        const bool bracketed = host.front() == '[' || host.back() == ']';
        if (bracketed && (host.size() < 3 || host.front() != '[' || host.back() != ']' ||
                          host.find(':') == std::string::npos || host.find_first_of("[]", 1) != host.size() - 1)) {
          return bad;
        }
        if (!bracketed && host.find_first_of(":[]") != std::string::npos) return bad;
        if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return bad;
        const int number = std::stoi(port);
        if (number < 1 || number > 65535) return bad;
        return {};
      },
      "HOST:PORT", "host:port");
}

namespace detail {
// What CLI11 (2.1) would wrongly take for a whole-number option: it reads an unsigned value with strtoull, which
// takes "-1" as 2^64 - 1 and a value past 64 bits as 2^64 - 1 (ERANGE unchecked), and a signed one with strtoll,
// which clamps past 64 bits alike. A 32-bit option refuses those itself (the clamped value does not fit it); a
// 64-bit one, a size_t, took them silently. Any other text is left to CLI11 and the option's own checks.
inline std::string WholeNumberOverflow(const std::string& text, bool is_unsigned) {
  const size_t first = text.find_first_not_of(" \t\n\v\f\r");
  if (first == std::string::npos) return {};
  char* end = nullptr;
  errno = 0;
  if (is_unsigned) {
    const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
    if (end != text.c_str() + text.size()) return {};  // not a whole number: CLI11 says so
    if (errno == ERANGE) return "expected a whole number that fits in 64 bits, got '" + text + "'";
    if (text[first] == '-' && v != 0) return "expected a whole number of 0 or more, got '" + text + "'";
    return {};
  }
  (void)std::strtoll(text.c_str(), &end, 0);
  if (end != text.c_str() + text.size()) return {};
  if (errno == ERANGE) return "expected a whole number that fits in 64 bits, got '" + text + "'";
  return {};
}

// CLI11's name of an option's value type without its validators' descriptions ("UINT" of "UINT:> 0").
inline std::string BaseTypeName(const CLI::Option& opt) {
  const std::string full = opt.get_type_name();
  return full.substr(0, full.find(':'));
}
}  // namespace detail

// Makes every whole-number option of `app` and of its subcommands (an element of a list option too: CLI11 checks
// each) refuse a value its type would hold wrapped or clamped rather than as given: "-1" for an unsigned option, a
// value past 64 bits for any. Added after the options' own checks, so their messages come first. ParseCommandLine
// calls it; a tool that parses by hand calls it before parsing.
inline void GuardWholeNumbers(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size_max() == 0) continue;  // a flag
    const std::string type = detail::BaseTypeName(*opt);
    if (type != "UINT" && type != "INT") continue;
    const bool is_unsigned = type == "UINT";
    opt->check(CLI::Validator(
        [is_unsigned](std::string& text) { return detail::WholeNumberOverflow(text, is_unsigned); }, "",
        "whole-number-overflow"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) GuardWholeNumbers(*sub);
}

// A flag given twice (`--json --json`) is refused as a value option given twice is: CLI11 counts flags and takes
// them, and a repeated flag is often a command line pasted together from two. Checked once a command's words are
// parsed, before it runs. --help and --version are left as CLI11 has them.
inline void RefuseRepeatedFlags(CLI::App& app) {
  CLI::App* self = &app;
  app.parse_complete_callback([self] {
    for (const CLI::Option* opt : self->get_options()) {
      if (opt->get_expected_max() != 0 || opt->count() < 2) continue;
      throw CLI::ArgumentMismatch(opt->get_name() + " is given " + std::to_string(opt->count()) +
                                  " times; it is a flag, given once");
    }
  });
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) RefuseRepeatedFlags(*sub);
}

// Parses the command line of `tool`. Returns the exit code when the program should end here: 2 after one line
// "<tool>: error: <what> (see --help)" for a bad option (common/cli_error_text.h), CLI11's own for --help; nullopt
// to go on.
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv, const std::string& tool) {
  GuardWholeNumbers(app);
  RefuseRepeatedFlags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << tool << ": error: " << Printable(ErrorText(app, e), std::string::npos) << " (see --help)\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace tunefleet::cli

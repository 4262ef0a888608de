// Checks for the options of the command-line tools (tunefleet, tunefleet-tracker, tunefleet-agent), each rejecting
// a bad value with one plain line: CLI11's own PositiveNumber prints the whole range of a double, and an unsigned
// option takes "-1" as a huge number unless it is checked first. ParseCommandLine reports a bad option so, and
// refuses for every whole-number option (scalar or list) a value its type would hold wrapped or clamped.
// Thread safety: free functions, no state.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "common/atomic_file.h"
#include "common/cli_error_text.h"
#include "common/device_key.h"
#include "common/printable.h"

namespace tunefleet::cli {

namespace detail {
// The whole of `text` as a finite number in decimal (digits, a point, an exponent: "2.5", "1e3"), or false. strtod
// alone took hexadecimal ("0x3", "0x1p1") and leading blanks, which the whole-number options refuse.
inline bool ParseNumber(const std::string& text, double& value) {
  if (text.empty() || text.find_first_not_of("+-.0123456789eE") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(value);
}

// Why `text` is not a whole number in plain decimal (an optional sign, then digits, without a leading 0 unless the
// number is 0), or empty. CLI11 (2.1) reads a whole number with strtoll/strtoull of base 0: "045667" as octal 19383,
// "0x4c03" as hex 19459, so a value would be silently changed; and a range check refused "019443" as out of range.
inline std::string NotPlainDecimal(const std::string& text) {
  const size_t start = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  const bool digits = text.size() > start && text.find_first_not_of("0123456789", start) == std::string::npos;
  if (digits && (text[start] != '0' || text.size() == start + 1)) return {};
  return "expected a whole number in decimal digits, got '" + text + "'";
}

// Whether `host` is an IPv4 address of four decimal numbers. The resolver reads the old forms inet_aton reads
// ("127.1", "0x7f.0.0.1", "2130706433", "010.0.0.1" octal) as some address that a log would not show as given, and
// looks up other digits and dots ("127.0.0.256") as a name that never resolves: both are refused, so a text meant as
// an IPv4 address is one.
inline bool NotDottedQuad(const std::string& host) {
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return false;
  return host.find_first_not_of("0123456789.") == std::string::npos || inet_aton(host.c_str(), &v4) != 0;
}

// Whether `text` is "[ADDRESS]" with an IPv6 address inside, as a host with a port is written (gRPC takes brackets
// round an IPv6 address only). A link-local address keeps its zone ("[fe80::1%eth0]"), which gRPC reads.
inline bool BracketedIpv6(const std::string& text) {
  if (text.size() < 3 || text.front() != '[' || text.back() != ']') return false;
  const std::string inside = text.substr(1, text.size() - 2);
  const size_t zone = inside.find('%');
  if (zone != std::string::npos && (zone + 1 == inside.size() || inside.find_first_of("[]", zone) != std::string::npos))
    return false;
  in6_addr v6{};
  return inet_pton(AF_INET6, inside.substr(0, zone).c_str(), &v6) == 1;
}
}  // namespace detail

// A whole number that the option's type T holds ("1.5", "1e3" and a value past T's range are refused, not rounded or
// clamped). Chain it with Positive() or NonNegative() for the sign.
template <typename T>
CLI::Validator Whole() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        // Not a number at all ("0x10", "2.5"): its range would mislead where a sign check follows ("from 0", then 0
        // refused as not above 0).
        if (std::string problem = detail::NotPlainDecimal(text); !problem.empty()) return problem;
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

// A number from `min` to `max`; `why`, where given, says where a bound comes from.
inline CLI::Validator Between(double min, double max, const std::string& why = "") {
  return CLI::Validator(
      [min, max, why](std::string& text) -> std::string {
        double v = 0;
        if (!detail::ParseNumber(text, v) || v < min || v > max) {
          char bounds[64];
          std::snprintf(bounds, sizeof bounds, "%g and %g", min, max);
          return "expected a number between " + std::string(bounds) + (why.empty() ? "" : " (" + why + ")") +
                 ", got '" + text + "'";
        }
        return {};
      },
      "", "between");
}

// A whole number from `min` to `max`, in decimal digits (a port, a count). Instead of CLI::Range, which says "Value
// 019443 not in range 0 to 65535" of a zero-padded number before GuardWholeNumbers could say what is wrong with it.
inline CLI::Validator WholeBetween(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        if (std::string problem = detail::NotPlainDecimal(text); !problem.empty()) return problem;
        errno = 0;
        const long long v = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE || v < min || v > max) {
          return "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got '" +
                 text + "'";
        }
        return {};
      },
      "in [" + std::to_string(min) + " - " + std::to_string(max) + "]", "whole-between");
}

// A host to listen on: not empty, and without a port ("127.0.0.1:80"; an IPv6 address holds several colons).
inline CLI::Validator ListenHost() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "expected an address, got ''";
        // The listener is given "HOST:PORT", where gRPC takes brackets round an IPv6 address only: "[127.0.0.1]"
        // failed as "in use, or not a local address", and "[::1" made a garbled address.
        if (text.find_first_of("[]") != std::string::npos) {
          if (detail::BracketedIpv6(text)) return {};
          return "expected brackets only round an IPv6 address (e.g. [::1]), got '" + text + "'";
        }
        const size_t colon = text.find(':');
        const bool one_colon = colon != std::string::npos && text.find(':', colon + 1) == std::string::npos;
        if (one_colon) return "expected an address without a port (the port goes in --port), got '" + text + "'";
        if (detail::NotDottedQuad(text))
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
// A host of digits and dots is an IPv4 address of four numbers and a bracketed one a valid IPv6 address: the agent
// redialled "127.0.0.256:19410" or "[::1x]:19410" for ever on "DNS resolution failed". A host name may resolve later.
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
        if (bracketed && !detail::BracketedIpv6(host)) return bad;
        if (!bracketed && host.find_first_of(":[]") != std::string::npos) return bad;
        if (!bracketed && detail::NotDottedQuad(host)) {
          return "expected host:port with an IPv4 address of four numbers from 0 to 255, got '" + text + "'";
        }
        if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return bad;
        const int number = std::stoi(port);
        if (number < 1 || number > 65535) return bad;
        return {};
      },
      "HOST:PORT", "host:port");
}

namespace detail {
// What CLI11 (2.1) would wrongly take for a whole-number option. It reads a value with strtoll/strtoull of base 0,
// so only plain decimal is read as written ("010" is 8, "0x10" 16; NotPlainDecimal). And strtoull takes "-1" as
// 2^64 - 1 and a value past 64 bits as 2^64 - 1 (ERANGE unchecked), and strtoll clamps past 64 bits alike. A 32-bit
// option refuses those itself (the clamped value does not fit it); a 64-bit one, a size_t, took them silently.
inline std::string WholeNumberOverflow(const std::string& text, bool is_unsigned) {
  if (std::string problem = NotPlainDecimal(text); !problem.empty()) return problem;
  errno = 0;
  if (is_unsigned) {
    const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE) return "expected a whole number that fits in 64 bits, got '" + text + "'";
    if (text[0] == '-' && v != 0) return "expected a whole number of 0 or more, got '" + text + "'";
    return {};
  }
  (void)std::strtoll(text.c_str(), nullptr, 10);
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
// each) refuse a value CLI11 would read otherwise than as written: one not in plain decimal ("010", "0x10", "1e3"),
// and one its type would hold wrapped or clamped ("-1" for an unsigned option, a value past 64 bits for any). Added
// after the options' own checks, so their messages come first (WholeBetween, not CLI::Range, for a bounded one: it
// says the same of "019443"). ParseCommandLine calls it; a tool that parses by hand calls it before parsing.
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
// "<tool>: error: <what> (see --help)" for a bad option (common/cli_error_text.h), 0 after --help or --version; nullopt
// to go on.
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv, const std::string& tool) {
  GuardWholeNumbers(app);
  RefuseRepeatedFlags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version: exit 0 once printed; 1 when stdout cannot be written
      app.exit(e);
      if (Status out = FlushStandardOutput(); !out.ok()) {
        std::cerr << tool << ": error: " << out.message() << "\n";
        return 1;
      }
      return 0;
    }
    std::cerr << tool << ": error: " << Printable(ErrorText(app, e), std::string::npos) << " (see --help)\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace tunefleet::cli

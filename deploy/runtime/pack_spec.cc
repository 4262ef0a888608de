#include "deploy/runtime/pack_spec.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <system_error>

#include "common/printable.h"

namespace tunefleet::runtime {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsWord(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!IsWordChar(c)) return false;
  return true;
}

// `s` as Task::ToSpec writes a number: digits only (no sign or space), no leading zero, within int64_t.
std::optional<uint64_t> CanonicalInteger(const std::string& s) {
  if (s.empty() || (s[0] == '0' && s.size() > 1)) return std::nullopt;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return static_cast<uint64_t>(v);
}

}  // namespace

double Distance(const SpecParts& a, const SpecParts& b) {
  if (a.sizes.size() != b.sizes.size() || a.extras != b.extras) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (size_t i = 0; i < a.sizes.size(); ++i) {
    d += std::fabs(std::log((static_cast<double>(a.sizes[i]) + 1) / (static_cast<double>(b.sizes[i]) + 1)));
  }
  return d;
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!IsWordChar(c)) return false;
  return true;
}

Result<SpecParts> ParseTaskSpec(const std::string& spec) {
  auto fail = [](const std::string& what) { return Status::Corruption(what); };
  const size_t a = spec.find(':');
  const size_t b = a == std::string::npos ? a : spec.find(':', a + 1);
  if (b == std::string::npos || spec.find(':', b + 1) != std::string::npos) {
    return fail("expected op:v1,v2,...[,name=value...]:precision, with two ':'");
  }
  SpecParts p;
  p.op = spec.substr(0, a);
  if (!IsIdentifier(p.op)) return fail("the op is not a name");
  p.precision = spec.substr(b + 1);
  if (p.precision != "float32" && p.precision != "float16" && p.precision != "float16-acc32") {
    return fail("the precision is not float32, float16 or float16-acc32");
  }
  std::istringstream in(spec.substr(a + 1, b - a - 1));
  std::string tok;
  size_t items = 0;
  while (std::getline(in, tok, ',')) {
    ++items;
    if (tok.empty()) return fail("a parameter is empty");
    const size_t eq = tok.find('=');
    if (eq == std::string::npos) {
      if (!p.extras.empty()) return fail("a size follows name=value parameters");
      const std::optional<uint64_t> size = CanonicalInteger(tok);
      if (!size) {
        return fail("size '" + Printable(tok, 40) +
                    "' is not a non-negative integer as the tuner writes it (digits only: no sign, space or leading "
                    "zero)");
      }
      p.sizes.push_back(*size);
    } else if (!IsIdentifier(tok.substr(0, eq)) || !IsWord(tok.substr(eq + 1))) {
      return fail("a parameter is not name=value");
    } else if (std::isdigit(static_cast<unsigned char>(tok[eq + 1])) && !CanonicalInteger(tok.substr(eq + 1))) {
      return fail("the value of '" + tok.substr(0, eq) + "' is not an integer as the tuner writes it" +
                  (tok[eq + 1] == '0' ? " (a leading zero)" : ""));
    } else if (!p.extras.emplace(tok.substr(0, eq), tok.substr(eq + 1)).second) {
      return fail("a parameter is given twice");
    }
  }
  const size_t commas = static_cast<size_t>(std::count(spec.begin() + a, spec.begin() + b, ','));
  if (items != commas + 1) return fail("a parameter is empty");
  if (p.sizes.empty()) return fail("no sizes");
  return p;
}

SpecParts Canonical(SpecParts parts, const OpExtras& extras) {
  for (auto it = parts.extras.begin(); it != parts.extras.end();) {
    const auto spec = extras.find(it->first);
    if (spec == extras.end()) {
      ++it;
      continue;
    }
    const std::vector<std::string>& names = spec->second.names;
    std::optional<int64_t> value;
    if (const std::optional<uint64_t> number = CanonicalInteger(it->second)) {
      value = static_cast<int64_t>(*number);
    } else if (auto named = std::find(names.begin(), names.end(), it->second); named != names.end()) {
      value = named - names.begin();
    }
    if (!value) {
      ++it;
    } else if (*value == spec->second.default_value) {
      it = parts.extras.erase(it);
    } else {
      it->second = *value < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(*value)]
                                                               : std::to_string(*value);
      ++it;
    }
  }
  return parts;
}

Result<SpecParts> ParseWorkload(const std::string& spec) {
  const size_t colons = static_cast<size_t>(std::count(spec.begin(), spec.end(), ':'));
  return ParseTaskSpec(colons == 1 ? spec + ":float32" : spec);
}

}  // namespace tunefleet::runtime

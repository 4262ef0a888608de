#include "deploy/runtime/pack_spec.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <system_error>

namespace tunefleet::runtime {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsWord(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!IsWordChar(c)) return false;
  return true;
}

bool IsNonNegativeInteger(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])) && ec == std::errc() &&
         end == s.data() + s.size();
}

}  // namespace

SpecParts SplitSpec(const std::string& spec) {
  SpecParts p;
  size_t a = spec.find(':');
  p.op = spec.substr(0, a);
  if (a == std::string::npos) return p;
  size_t b = spec.find(':', a + 1);
  std::string params = spec.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
  p.precision = b == std::string::npos ? "float32" : spec.substr(b + 1);
  std::istringstream in(params);
  std::string tok;
  while (std::getline(in, tok, ',')) {
    if (auto eq = tok.find('='); eq != std::string::npos) {
      p.extras[tok.substr(0, eq)] = tok.substr(eq + 1);
    } else {
      p.sizes.push_back(std::strtod(tok.c_str(), nullptr));
    }
  }
  return p;
}

double Distance(const SpecParts& a, const SpecParts& b) {
  if (a.sizes.size() != b.sizes.size() || a.extras != b.extras) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (size_t i = 0; i < a.sizes.size(); ++i) {
    d += std::fabs(std::log((a.sizes[i] + 1) / (b.sizes[i] + 1)));
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
  if (b == std::string::npos || spec.find(':', b + 1) != std::string::npos) return fail("expected two ':'");
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
      if (!IsNonNegativeInteger(tok)) return fail("a size is not a non-negative integer");
      p.sizes.push_back(std::strtod(tok.c_str(), nullptr));
    } else if (!IsIdentifier(tok.substr(0, eq)) || !IsWord(tok.substr(eq + 1))) {
      return fail("a parameter is not name=value");
    } else if (!p.extras.emplace(tok.substr(0, eq), tok.substr(eq + 1)).second) {
      return fail("a parameter is given twice");
    }
  }
  const size_t commas = static_cast<size_t>(std::count(spec.begin() + a, spec.begin() + b, ','));
  if (items != commas + 1) return fail("a parameter is empty");
  if (p.sizes.empty()) return fail("no sizes");
  return p;
}

}  // namespace tunefleet::runtime

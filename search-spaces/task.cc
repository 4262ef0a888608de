#include "search-spaces/task.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "common/printable.h"
#include "search-spaces/op_signature.h"

namespace tunefleet {
namespace {

// Part of a spec as an error quotes it: up to 200 bytes, then its length ("... (100003 bytes)"), so that a long one
// (a generated command line gone wrong) is not echoed whole, and twice. Shorter text is kept as it is: the line's
// printer escapes it.
std::string Quoted(std::string_view text) {
  constexpr size_t kMaxQuoted = 200;
  return text.size() <= kMaxQuoted ? std::string(text) : Printable(text, kMaxQuoted);
}

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Parses `text` as the value of parameter `p` (integer or one of its symbols). Returns the error text.
std::string ParseValue(const ParamSpec& p, std::string_view text, int64_t* out) {
  for (size_t i = 0; i < p.symbols.size(); ++i) {
    if (text == p.symbols[i]) {
      *out = static_cast<int64_t>(i);
      return {};
    }
  }
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    std::string msg = "'" + Quoted(text) + "' is not an integer";
    if (!p.symbols.empty()) {
      msg = "'" + Quoted(text) + "' is not a valid " + p.name + " (one of";
      for (size_t i = 0; i < p.symbols.size(); ++i) msg += (i ? ", " : " ") + p.symbols[i];
      msg += ")";
    }
    return msg;
  }
  // As every count of the command line: "010" is refused, not read as 10 (or as 8, as C and a shell would).
  const size_t sign = text[0] == '-' ? 1 : 0;
  if (text.size() > sign + 1 && text[sign] == '0') return "'" + Quoted(text) + "' has a leading zero";
  if (v < p.min || v > p.max) {
    return p.name + "=" + std::to_string(v) + " is out of range (" + std::to_string(p.min) + ".." +
           std::to_string(p.max) + ")";
  }
  *out = v;
  return {};
}

std::string RenderValue(const ParamSpec* p, int64_t v) {
  if (p && v >= 0 && static_cast<size_t>(v) < p->symbols.size()) return p->symbols[v];
  return std::to_string(v);
}

}  // namespace

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFloat32: return "float32";
    case Precision::kFloat16: return "float16";
    case Precision::kFloat16Acc32: return "float16-acc32";
  }
  return "float32";
}

Result<Precision> ParsePrecision(std::string_view s) {
  if (s == "float32" || s == "fp32" || s == "f32") return Precision::kFloat32;
  if (s == "float16" || s == "fp16" || s == "f16" || s == "half") return Precision::kFloat16;
  if (s == "float16-acc32" || s == "fp16-acc32") return Precision::kFloat16Acc32;
  return Status::InvalidArgument("unknown precision '" + Quoted(s) +
                                 "' (expected float32, float16 or float16-acc32)");
}

const std::vector<std::string>& ActivationNames() {
  static const std::vector<std::string> kNames = {"none", "relu", "relu6", "sigmoid", "tanh", "leaky_relu"};
  return kNames;
}

const char* ActivationName(Activation a) {
  auto i = static_cast<size_t>(a);
  return i < ActivationNames().size() ? ActivationNames()[i].c_str() : "none";
}

std::string ActivationExpr(Activation a, const std::string& x) {
  switch (a) {
    case Activation::kNone: return x;
    case Activation::kRelu: return "fmax(" + x + ", 0.0f)";
    case Activation::kRelu6: return "clamp(" + x + ", 0.0f, 6.0f)";
    case Activation::kSigmoid: return "(1.0f / (1.0f + exp(-(" + x + "))))";
    case Activation::kTanh: return "tanh(" + x + ")";
    case Activation::kLeakyRelu: return "((" + x + ") > 0.0f ? (" + x + ") : 0.1f * (" + x + "))";
  }
  return x;
}

int64_t Task::Get(std::string_view name, int64_t fallback) const {
  for (const auto& [n, v] : params)
    if (n == name) return v;
  return fallback;
}

bool Task::Has(std::string_view name) const {
  for (const auto& [n, v] : params)
    if (n == name) return true;
  return false;
}

std::string Task::ToSpec() const {
  const OpSignature* sig = FindOpSignature(op);
  std::string s = op + ":";
  bool first = true;
  for (const auto& [n, v] : params) {
    const ParamSpec* p = sig ? sig->Find(n) : nullptr;
    bool positional = false;
    if (sig) {
      for (const auto& q : sig->positional) positional |= (q.name == n);
    }
    if (!positional && p && v == p->default_value) continue;  // default extras are implied
    if (!first) s += ",";
    first = false;
    s += positional ? std::to_string(v) : n + "=" + RenderValue(p, v);
  }
  return s + ":" + PrecisionName(precision);
}

Result<Task> Task::Parse(std::string_view spec_in) {
  std::string_view spec = Trim(spec_in);
  const std::string who = Quoted(spec);
  auto fail = [&](const std::string& what) -> Status { return Status::InvalidArgument(who + ": " + what); };

  auto parts = SplitOn(spec, ':');
  if (parts.size() < 2 || parts.size() > 3)
    return fail("expected op:params[:dtype], e.g. gemm:256,256,256:float32");
  Task task;
  task.op = std::string(Trim(parts[0]));
  const OpSignature* sig = FindOpSignature(task.op);
  if (!sig) {
    std::string known;
    for (const auto& s : OpSignatures()) known += (known.empty() ? "" : ", ") + s.op;
    return fail("unknown op '" + Quoted(task.op) + "' (known: " + known + ")");
  }
  if (parts.size() == 3) {
    auto p = ParsePrecision(Trim(parts[2]));
    if (!p.ok()) return fail(p.status().message());
    task.precision = *p;
  }

  std::vector<int64_t> pos;
  std::vector<std::optional<int64_t>> extras(sig->extras.size());
  for (std::string_view item : SplitOn(parts[1], ',')) {
    item = Trim(item);
    if (item.empty()) return fail("empty parameter");
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (std::any_of(extras.begin(), extras.end(), [](const auto& e) { return e.has_value(); }))
        return fail("positional value '" + Quoted(item) + "' after name=value parameters");
      if (pos.size() >= sig->positional.size())
        return fail(task.op + " takes at most " + std::to_string(sig->positional.size()) + " sizes " +
                    sig->Usage());
      int64_t v = 0;
      std::string err = ParseValue(sig->positional[pos.size()], item, &v);
      if (!err.empty()) return fail(err);
      pos.push_back(v);
      continue;
    }
    std::string_view name = Trim(item.substr(0, eq));
    size_t k = 0;
    while (k < sig->extras.size() && sig->extras[k].name != name) ++k;
    if (k == sig->extras.size()) {
      std::string known;
      for (const auto& e : sig->extras) known += (known.empty() ? "" : ", ") + e.name;
      return fail("unknown parameter '" + Quoted(name) + "' for " + task.op + " (known: " + known + ")");
    }
    if (extras[k]) return fail("parameter '" + Quoted(name) + "' given twice");
    int64_t v = 0;
    std::string err = ParseValue(sig->extras[k], Trim(item.substr(eq + 1)), &v);
    if (!err.empty()) return fail(err);
    extras[k] = v;
  }
  if (pos.size() < sig->required) {
    return fail(task.op + " needs " + std::to_string(sig->required) + " sizes " + sig->Usage() + ", got " +
                std::to_string(pos.size()));
  }
  for (size_t i = 0; i < sig->positional.size(); ++i)
    task.params.emplace_back(sig->positional[i].name, i < pos.size() ? pos[i] : sig->positional[i].default_value);
  for (size_t k = 0; k < sig->extras.size(); ++k)
    task.params.emplace_back(sig->extras[k].name, extras[k].value_or(sig->extras[k].default_value));
  // Every product of sizes a template forms (elements, work-items, FLOPs) divides this one: it must fit.
  int64_t product = 1;
  for (const auto& [name, v] : task.params) {
    if (__builtin_mul_overflow(product, std::max<int64_t>(v, 1), &product) || product > (int64_t{1} << 62)) {
      return fail("its sizes multiply to more than 2^62");
    }
  }
  return task;
}

}  // namespace tunefleet

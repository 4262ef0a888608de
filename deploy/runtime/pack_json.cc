#include "deploy/runtime/pack_json.h"

#include <cmath>
#include <string_view>

#include "common/json_parse.h"
#include "common/printable.h"

namespace tunefleet::runtime::pack_json {
namespace {

constexpr size_t kMaxDescribedString = 40;
constexpr size_t kMaxParseError = 240;  // bytes of the JSON library's message, its quote of the input included

std::string Range(const std::string& min, const std::string& max) { return " in [" + min + ", " + max + "]"; }

}  // namespace

Result<nlohmann::json> ParseBounded(const std::string& text) {
  JsonGuard guard;  // nesting, and a key given twice in one object (a value a reader of the text may not see)
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, guard.Callback());
  } catch (const nlohmann::json::exception& e) {
    // Parse errors quote the offending input, which may be any bytes (printable ASCII only), and may be long: a pack
    // cut inside a kernel's source quoted the whole source read so far. A number past a double's range ("1e400") is
    // not a parse_error but an out_of_range, thrown by the same parse.
    return Status::Corruption("not valid JSON: " + Printable(e.what(), kMaxParseError, PrintableBytes::kAsciiOnly));
  }
  if (std::string problem = guard.Problem(); !problem.empty()) return Status::Corruption(problem);
  return j;
}

Status Field::Error(const std::string& what) const {
  return Status::Corruption(path_.empty() ? what : path_ + ": " + what);
}

std::string Field::MemberPath(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

std::string Field::ElementPath(size_t index) const { return path_ + "[" + std::to_string(index) + "]"; }

std::string Describe(const nlohmann::json& value) {
  if (value.is_object() || value.is_array() || value.is_binary()) return value.type_name();
  if (value.is_string() && value.get_ref<const std::string&>().size() > kMaxDescribedString) {
    return nlohmann::json(value.get_ref<const std::string&>().substr(0, kMaxDescribedString))
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
           "...";
  }
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status RequireObject(const Field& f) {
  if (!f.value().is_object()) return f.Error("must be an object, got " + Describe(f.value()));
  return Status::OK();
}

Result<Field> Member(const Field& object, const std::string& key) {
  TF_RETURN_IF_ERROR(RequireObject(object));
  std::optional<Field> f = OptionalMember(object, key);
  if (!f) return Status::Corruption(object.MemberPath(key) + ": is missing");
  return *f;
}

std::optional<Field> OptionalMember(const Field& object, const std::string& key) {
  if (!object.value().is_object()) return std::nullopt;
  auto it = object.value().find(key);
  if (it == object.value().end()) return std::nullopt;
  return Field(*it, object.MemberPath(key));
}

Result<std::vector<Field>> Elements(const Field& f) {
  if (!f.value().is_array()) return f.Error("must be an array, got " + Describe(f.value()));
  std::vector<Field> out;
  out.reserve(f.value().size());
  for (size_t i = 0; i < f.value().size(); ++i) out.emplace_back(f.value()[i], f.ElementPath(i));
  return out;
}

Result<std::string> String(const Field& f) {
  if (!f.value().is_string()) return f.Error("must be a string, got " + Describe(f.value()));
  const auto& s = f.value().get_ref<const std::string&>();
  if (s.find('\0') != std::string::npos) return f.Error("must not contain a NUL character");
  return s;
}

Result<std::string> OneOf(const Field& f, const std::vector<std::string>& allowed) {
  TF_ASSIGN_OR_RETURN(std::string s, String(f));
  std::string names;
  for (const auto& a : allowed) {
    if (s == a) return s;
    names += (names.empty() ? "\"" : ", \"") + a + "\"";
  }
  return f.Error("must be one of " + names + ", got " + Describe(f.value()));
}

Result<uint64_t> Unsigned(const Field& f, uint64_t min, uint64_t max) {
  const nlohmann::json& v = f.value();
  const std::string want = "must be an integer" + Range(std::to_string(min), std::to_string(max));
  if (!v.is_number_integer()) return f.Error(want + ", got " + Describe(v));
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) return f.Error(want + ", got " + Describe(v));
  uint64_t u = v.get<uint64_t>();
  if (u < min || u > max) return f.Error(want + ", got " + Describe(v));
  return u;
}

Result<int64_t> Integer(const Field& f, int64_t min, int64_t max) {
  const nlohmann::json& v = f.value();
  const std::string want = "must be an integer" + Range(std::to_string(min), std::to_string(max));
  if (!v.is_number_integer()) return f.Error(want + ", got " + Describe(v));
  if (v.is_number_unsigned() && (max < 0 || v.get<uint64_t>() > static_cast<uint64_t>(max))) {
    return f.Error(want + ", got " + Describe(v));
  }
  int64_t i = v.get<int64_t>();
  if (i < min || i > max) return f.Error(want + ", got " + Describe(v));
  return i;
}

Result<double> Number(const Field& f, double min, double max) {
  const nlohmann::json& v = f.value();
  const std::string want =
      "must be a finite number in [" + nlohmann::json(min).dump() + ", " + nlohmann::json(max).dump() + "]";
  if (!v.is_number()) return f.Error(want + ", got " + Describe(v));
  double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max) return f.Error(want + ", got " + Describe(v));
  return d;
}

}  // namespace tunefleet::runtime::pack_json

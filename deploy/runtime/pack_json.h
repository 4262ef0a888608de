// Typed, bounded reading of a kernel pack's JSON with errors as values. Each reader checks the JSON type
// and range of one value and names it by its path in the document ("program.buffers[2].count"), so a
// malformed or hostile pack is refused with one message instead of an exception, a wrap or a truncation.
// Internal to tunefleet-runtime (nlohmann_json is a private dependency of the library).
// Thread safety: plain functions of their arguments; a Field refers to a document it does not own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace tunefleet::runtime::pack_json {

// Parses `text` as JSON. Corruption carries nlohmann's parse error text, or says the nesting is deeper than
// kMaxJsonDepth (common/json_parse.h): such arrays and objects are refused while parsing, so nothing that later
// walks the document recursively (copies, dump(), comparisons) can exhaust the stack.
Result<nlohmann::json> ParseBounded(const std::string& text);

// One value of a document and its path, for messages. The document must outlive the Field.
class Field {
 public:
  Field(const nlohmann::json& value, std::string path) : value_(&value), path_(std::move(path)) {}
  const nlohmann::json& value() const { return *value_; }
  const std::string& path() const { return path_; }
  // Corruption "<path>: <what>".
  Status Error(const std::string& what) const;
  // The path of member `key` / element `index` of this value.
  std::string MemberPath(const std::string& key) const;
  std::string ElementPath(size_t index) const;

 private:
  const nlohmann::json* value_;
  std::string path_;
};

// A short description of a value for messages: scalars as JSON (strings cut), containers by type name.
std::string Describe(const nlohmann::json& value);

Status RequireObject(const Field& f);
// Member `key` of an object: Corruption naming the member when it is missing.
Result<Field> Member(const Field& object, const std::string& key);
// Member `key` of an object, or nullopt when absent. `object` must be an object (RequireObject).
std::optional<Field> OptionalMember(const Field& object, const std::string& key);
// The elements of an array, by reference: Corruption when `f` is not an array.
Result<std::vector<Field>> Elements(const Field& f);

// A string without NUL characters (they would cut it short where it is used as a C string).
Result<std::string> String(const Field& f);
// A string equal to one of `allowed`.
Result<std::string> OneOf(const Field& f, const std::vector<std::string>& allowed);
// An integer (not a float, not a bool) within [min, max].
Result<uint64_t> Unsigned(const Field& f, uint64_t min, uint64_t max);
Result<int64_t> Integer(const Field& f, int64_t min, int64_t max);
// A number (integer or float) that is finite and within [min, max].
Result<double> Number(const Field& f, double min, double max);

// What `read` gives for member `key` of `object`, or `fallback` when the member is absent.
template <typename T, typename Read>
Result<T> MemberOr(const Field& object, const std::string& key, T fallback, Read read) {
  std::optional<Field> f = OptionalMember(object, key);
  if (!f) return fallback;
  return read(*f);
}

}  // namespace tunefleet::runtime::pack_json

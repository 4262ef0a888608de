// ParseJson: JSON text read from a file, a tuning log, a command line or a peer, parsed with a limit on nesting and
// no key given twice in one object. The parser itself does not recurse, but printing a value does (nlohmann's
// serializer): a config nested 100,000 levels deep, quoted in an error message, overflowed the stack. Nothing
// tunefleet reads nests more than a few levels. A key given twice is kept last by the JSON library (another library
// keeps the first, a reader of the text may see either): `--config '{"MWG":16,...,"MWG":32}'` ran MWG 32 unsaid.
// Thread safety: a JsonGuard serves one parse; ParseJson is a pure function.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tunefleet {

inline constexpr int kMaxJsonDepth = 64;

// Watches one parse: Callback() is its parser callback, which stops taking values at the first container nested past
// kMaxJsonDepth (so the parsed value never holds one) and notes the first key given twice in one object. Problem()
// says what was wrong, "" when nothing. The guard must outlive the parse.
class JsonGuard {
 public:
  nlohmann::json::parser_callback_t Callback() {
    return [this](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
      using Event = nlohmann::json::parse_event_t;
      if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxJsonDepth) too_deep_ = true;
      if (event == Event::object_start) open_objects_.emplace_back();
      if (event == Event::object_end && !open_objects_.empty()) open_objects_.pop_back();
      if (event == Event::key && !open_objects_.empty() && parsed.is_string() && !repeated_key_ &&
          !open_objects_.back().insert(parsed.get<std::string>()).second) {
        repeated_key_ = parsed.get<std::string>();
      }
      return !too_deep_;
    };
  }
  std::string Problem() const {
    if (too_deep_) return "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    if (repeated_key_) {
      return "JSON with the key " + nlohmann::json(*repeated_key_).dump(-1, ' ', false,
                                                                         nlohmann::json::error_handler_t::replace) +
             " given twice in one object (which one counts is not defined)";
    }
    return "";
  }

 private:
  bool too_deep_ = false;
  std::vector<std::set<std::string>> open_objects_;  // the keys of each object being parsed, innermost last
  std::optional<std::string> repeated_key_;
};

// The parsed value, or a discarded one (is_discarded()) when `text` is not JSON, nests deeper than kMaxJsonDepth or
// gives a key twice in one object; `why`, when given, then says which.
inline nlohmann::json ParseJson(std::string_view text, std::string* why = nullptr) {
  JsonGuard guard;
  nlohmann::json j = nlohmann::json::parse(text, guard.Callback(), /*allow_exceptions=*/false);
  if (std::string problem = guard.Problem(); !problem.empty()) {
    if (why) *why = problem;
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  if (j.is_discarded() && why) *why = "not valid JSON";
  return j;
}

}  // namespace tunefleet

// ParseJson: JSON text read from a file, a tuning log, a command line or a peer, parsed with a limit on nesting. The
// parser itself does not recurse, but printing a value does (nlohmann's serializer): a config nested 100,000 levels
// deep, quoted in an error message, overflowed the stack. Nothing tunefleet reads nests more than a few levels.
// Thread safety: a pure function.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tunefleet {

inline constexpr int kMaxJsonDepth = 64;

// A parser callback that sets `*too_deep` at the first container nested past kMaxJsonDepth and from then on
// discards what it is asked about, so the parsed value never holds such a container.
inline nlohmann::json::parser_callback_t JsonDepthBound(bool* too_deep) {
  return [too_deep](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    const bool starts =
        event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start;
    if (starts && depth >= kMaxJsonDepth) *too_deep = true;
    return !*too_deep;
  };
}

// The parsed value, or a discarded one (is_discarded()) when `text` is not JSON or nests deeper than
// kMaxJsonDepth; `why`, when given, then says which.
inline nlohmann::json ParseJson(std::string_view text, std::string* why = nullptr) {
  bool too_deep = false;
  nlohmann::json j = nlohmann::json::parse(text, JsonDepthBound(&too_deep), /*allow_exceptions=*/false);
  if (too_deep) {
    if (why) *why = "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  if (j.is_discarded() && why) *why = "not valid JSON";
  return j;
}

}  // namespace tunefleet

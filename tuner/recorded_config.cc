#include "tuner/recorded_config.h"

#include <nlohmann/json.hpp>

#include "common/json_parse.h"

namespace tunefleet {

std::optional<uint64_t> RecordedIndex(const Space& space, const RecordRow& record) {
  uint64_t index = record.config_index;
  const nlohmann::json j = ParseJson(record.config);
  if (!j.is_discarded()) {
    if (Result<Config> c = space.FromJson(j); c.ok()) index = space.IndexOf(*c);
  }
  if (index >= space.RawSize()) return std::nullopt;
  return index;
}

}  // namespace tunefleet

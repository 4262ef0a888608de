#include "tuner/recorded_config.h"

#include <nlohmann/json.hpp>

#include "common/json_parse.h"

namespace tunefleet {

std::optional<uint64_t> RecordedIndex(const Space& space, const RecordRow& record) {
  if (record.config.empty()) {  // nothing to go by but the index
    if (record.config_index >= space.RawSize()) return std::nullopt;
    return record.config_index;
  }
  const nlohmann::json j = ParseJson(record.config);
  if (j.is_discarded()) return std::nullopt;
  Result<Config> c = space.FromJson(j);
  if (!c.ok()) return std::nullopt;
  return space.IndexOf(*c);
}

}  // namespace tunefleet

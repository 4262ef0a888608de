#include "tuner/recorded_config.h"

#include <nlohmann/json.hpp>

#include "common/json_parse.h"

namespace tunefleet {

std::optional<uint64_t> RecordedIndex(const Space& space, const RecordRow& record) {
  const nlohmann::json j = ParseJson(record.config);
  if (j.is_discarded()) return std::nullopt;
  Result<Config> c = space.FromJson(j);
  if (!c.ok()) return std::nullopt;
  return space.IndexOf(*c);
}

}  // namespace tunefleet

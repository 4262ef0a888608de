#include "tuner/task_workload.h"

#include <nlohmann/json.hpp>

#include "common/json_parse.h"

namespace tunefleet {
namespace {

nlohmann::json Fresh(const Task& task, int64_t count) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : task.params) params[k] = v;
  return nlohmann::json{{"op", task.op}, {"params", params}, {"precision", PrecisionName(task.precision)},
                        {"count", count}};
}

// The stored workload when it is a JSON object (nesting bounded, as everything read from a log), else null.
nlohmann::json ParseObject(const std::string& text) {
  nlohmann::json j = ParseJson(text);
  return j.is_object() ? j : nlohmann::json();
}

}  // namespace

std::string LogWorkloadJson(const Task& task, int64_t count, const std::string& model) {
  nlohmann::json j = Fresh(task, count);
  if (!model.empty()) j["models"] = nlohmann::json{{model, count}};
  return j.dump();
}

std::optional<std::string> WithModelCount(const std::string& stored, const Task& task, int64_t count,
                                          const std::string& model) {
  if (model.empty()) return std::nullopt;
  const nlohmann::json before = ParseObject(stored);
  nlohmann::json j = before.is_null() ? Fresh(task, count) : before;
  if (!j.contains("models") || !j["models"].is_object()) j["models"] = nlohmann::json::object();
  j["models"][model] = count;
  int64_t sum = 0;
  for (const auto& [name, n] : j["models"].items()) sum += n.is_number_integer() ? n.get<int64_t>() : 0;
  j["count"] = sum;
  if (j == before) return std::nullopt;
  return j.dump();
}

std::map<std::string, int64_t> ModelCounts(const std::string& stored) {
  std::map<std::string, int64_t> out;
  nlohmann::json j = ParseObject(stored);
  if (j.is_null() || !j.contains("models") || !j["models"].is_object()) return out;
  for (const auto& [name, n] : j["models"].items()) {
    if (n.is_number_integer()) out[name] = n.get<int64_t>();
  }
  return out;
}

}  // namespace tunefleet

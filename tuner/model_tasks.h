// From an imported model to its tuning tasks: deduplication by workload with occurrence counts, the model's
// precision (tvmc-style mixed precision over a list of op kinds), and the two renderings of `tunefleet tasks`
// (a text table and a JSON array).
//
// Deduplication key: the task spec without the fused activation. A Relu/ReLU6 epilogue does not change which
// kernel configuration is fastest, so, as AutoTVM does, one task is tuned per workload and the activations seen
// are listed with it (`activations`). With `split_activations` the activation is part of the task (act=relu)
// and occurrences with different epilogues become different tasks.
// Thread safety: free functions over values.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "search-spaces/task.h"
#include "tuner/onnx_import.h"

namespace tunefleet {

// The precision a model's layers are tuned in. A layer of float32 tensors takes `precision` when its op kind is in
// `ops`. A layer of float16 tensors is half already: it stays float16, or becomes float16-acc32 (half tensors,
// float accumulation) when asked for its op kind; it never becomes float32, whose kernels would take buffers of
// another type than the model's.
struct PrecisionPolicy {
  Precision precision = Precision::kFloat32;
  // Op kinds that take `precision`; the others stay float32. Names as tvmc's --mixed-precision-ops:
  // "conv2d" (regular, grouped and depthwise), "depthwise_conv2d" (depthwise only), "dense" (Gemm, MatMul),
  // "pool". The default is tvmc's: conv2d and dense.
  std::set<std::string> ops = {"conv2d", "dense"};
  bool Applies(const Task& task) const;
};

// The refusal of --mixed-precision-ops without a --precision that lowers anything (it had no effect, unsaid).
inline constexpr char kMixedOpsWithoutPrecision[] =
    "--mixed-precision-ops names the layers that --precision lowers; give --precision float16 or float16-acc32 with "
    "it (without, every layer keeps its type)";

// Parses "conv2d,dense" (also accepts "all", and "gemm"/"matmul" for dense). Errors name the bad entry.
Result<std::set<std::string>> ParseMixedPrecisionOps(std::string_view csv);

struct TaskListOptions {
  PrecisionPolicy precision;
  bool split_activations = false;
};

struct ModelTask {
  Task task;                                  // with its precision (and its activation when split)
  int64_t count = 0;                          // occurrences in the model
  std::map<std::string, int64_t> activations;  // fused epilogues seen: "relu" -> 2, "none" -> 2
  std::vector<std::string> nodes;             // the ONNX nodes it covers, graph order
  std::string onnx_ops;                       // of the first occurrence, e.g. "Conv+Relu"
  nlohmann::json workload;                    // shapes/attributes of the first occurrence
};

// Tasks in order of first occurrence.
std::vector<ModelTask> BuildModelTasks(const ImportedModel& model, const TaskListOptions& options);

// The `tunefleet tasks` table: index, op, workload, count, spec; then the totals and the operators not tuned.
std::string FormatTaskTable(const ImportedModel& model, const std::vector<ModelTask>& tasks);

// A JSON array; each element: {"index", "op", "spec", "count", "precision", "params": {..}, "activations": {..},
// "onnx_ops", "nodes", "workload": {shapes and attributes}}.
nlohmann::json TasksToJson(const std::vector<ModelTask>& tasks);

}  // namespace tunefleet

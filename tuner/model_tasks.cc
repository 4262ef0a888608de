#include "tuner/model_tasks.h"

#include <sstream>
#include <unordered_map>

namespace tunefleet {
namespace {

// Short human form of the workload, e.g. "1x64x56x56 * 64x64x3x3 s1 p1" or "1x512 * 1000x512^T".
std::string Dims(const nlohmann::json& j) {
  std::string s;
  for (size_t i = 0; i < j.size(); ++i) s += (i ? "x" : "") + std::to_string(j[i].get<int64_t>());
  return s;
}

std::string WorkloadText(const ModelTask& t) {
  const auto& w = t.workload;
  if (t.task.op == "gemm") {
    std::string s = Dims(w.value("a", nlohmann::json::array())) + " * " + Dims(w.value("b", nlohmann::json::array()));
    if (w.value("transb", false)) s += "^T";
    return s;
  }
  std::string s = Dims(w.value("input", nlohmann::json::array()));
  if (w.contains("weight")) s += " * " + Dims(w["weight"]);
  if (w.contains("kernel")) s += " " + std::string(w.value("pool", "")) + " " + Dims(w["kernel"]);
  s += " s" + std::to_string(w.value("strides", 1)) + " p" + std::to_string(w.value("pad", 0));
  if (w.value("dilation", 1) != 1) s += " d" + std::to_string(w.value("dilation", 1));
  if (w.value("groups", 1) != 1) s += " g" + std::to_string(w.value("groups", 1));
  return s;
}

// `s` padded with spaces to `width` (a longer `s` whole), as printf's %-9s and %5s.
std::string PadRight(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}
std::string PadLeft(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace

bool PrecisionPolicy::Applies(const Task& task) const {
  if (task.op == "conv2d") return ops.count("conv2d") > 0;
  if (task.op == "dwconv2d") return ops.count("conv2d") > 0 || ops.count("depthwise_conv2d") > 0;
  if (task.op == "gemm") return ops.count("dense") > 0;
  return ops.count(task.op) > 0;
}

Result<std::set<std::string>> ParseMixedPrecisionOps(std::string_view csv) {
  static const std::set<std::string> kKnown = {"conv2d", "depthwise_conv2d", "dense", "pool"};
  std::set<std::string> out;
  std::string item;
  std::istringstream in{std::string(csv)};
  while (std::getline(in, item, ',')) {
    if (item.rfind("nn.", 0) == 0) item = item.substr(3);  // tvmc writes nn.conv2d, nn.dense
    if (item == "gemm" || item == "matmul") item = "dense";
    if (item == "all") {
      out.insert(kKnown.begin(), kKnown.end());
      continue;
    }
    if (!kKnown.count(item)) {
      return Status::InvalidArgument("--mixed-precision-ops: unknown op '" + item +
                                     "' (known: conv2d, depthwise_conv2d, dense, pool, all)");
    }
    out.insert(item);
  }
  if (out.empty()) return Status::InvalidArgument("--mixed-precision-ops: empty list");
  return out;
}

std::vector<ModelTask> BuildModelTasks(const ImportedModel& model, const TaskListOptions& options) {
  std::vector<ModelTask> tasks;
  std::unordered_map<std::string, size_t> by_spec;
  for (const auto& occ : model.ops) {
    Task task = occ.task;
    if (options.split_activations && occ.activation != Activation::kNone) {
      task.params.emplace_back("act", static_cast<int64_t>(occ.activation));
      if (auto parsed = Task::Parse(task.ToSpec()); parsed.ok()) task = std::move(*parsed);
    }
    // Lowering only (see PrecisionPolicy): float32 asked of a float16 layer leaves it float16.
    if (options.precision.Applies(task) && options.precision.precision != Precision::kFloat32) {
      task.precision = options.precision.precision;
    }
    const std::string spec = task.ToSpec();
    auto [it, added] = by_spec.emplace(spec, tasks.size());
    if (added) {
      ModelTask t;
      t.task = std::move(task);
      t.onnx_ops = occ.onnx_ops;
      t.workload = occ.workload;
      tasks.push_back(std::move(t));
    }
    ModelTask& t = tasks[it->second];
    ++t.count;
    ++t.activations[ActivationName(occ.activation)];
    t.nodes.push_back(occ.node);
  }
  return tasks;
}

std::string FormatTaskTable(const ImportedModel& model, const std::vector<ModelTask>& tasks) {
  std::ostringstream out;
  out << PadLeft("#", 4) << "  " << PadRight("op", 9) << " " << PadRight("workload", 40) << " " << PadLeft("count", 5)
      << "  spec\n";
  int64_t occurrences = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const ModelTask& t = tasks[i];
    occurrences += t.count;
    // Built whole: a fixed buffer cut the rows of long workloads (a MatMul of many batch dims) before their spec.
    // Numbered from 1, as tune's progress numbers them ("task 2/7").
    out << PadLeft(std::to_string(i + 1), 4) << "  " << PadRight(t.task.op, 9) << " " << PadRight(WorkloadText(t), 40)
        << " " << PadLeft(std::to_string(t.count), 5) << "  " << t.task.ToSpec();
    if (t.activations.size() > 1 || !t.activations.count("none")) {
      out << "  [";
      bool first = true;
      for (const auto& [act, n] : t.activations) {
        out << (first ? "" : ", ") << act << " x" << n;
        first = false;
      }
      out << "]";
    }
    out << "\n";
  }
  out << tasks.size() << " tasks, " << occurrences << " tunable operators in " << model.name << " (opset "
      << model.opset << ")\n";
  if (!model.not_tuned.empty()) {
    int64_t n = 0;
    std::string list;
    for (const auto& [op, count] : model.not_tuned) {
      n += count;
      list += (list.empty() ? "" : ", ") + op + " x" + std::to_string(count);
    }
    out << "not tuned (" << n << (n == 1 ? " node): " : " nodes): ") << list << "\n";
  }
  return out.str();
}

nlohmann::json TasksToJson(const std::vector<ModelTask>& tasks) {
  nlohmann::json arr = nlohmann::json::array();
  for (size_t i = 0; i < tasks.size(); ++i) {
    const ModelTask& t = tasks[i];
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [name, value] : t.task.params) params[name] = value;
    arr.push_back({{"index", i + 1},  // the table's "#"
                   {"op", t.task.op},
                   {"spec", t.task.ToSpec()},
                   {"count", t.count},
                   {"precision", PrecisionName(t.task.precision)},
                   {"params", params},
                   {"activations", t.activations},
                   {"onnx_ops", t.onnx_ops},
                   {"nodes", t.nodes},
                   {"workload", t.workload}});
  }
  return arr;
}

}  // namespace tunefleet

// `tunefleet tasks MODEL.onnx`: the tuning tasks of a model, deduplicated, as a table or JSON.
#include <iostream>
#include <memory>

#include "common/atomic_file.h"
#include "common/cli_checks.h"
#include "tuner/command.h"
#include "tuner/model_tasks.h"
#include "tuner/onnx_import.h"
#include "tuner/task_file.h"

namespace tunefleet {
namespace {

struct TasksArgs {
  std::string model;
  bool json = false;
  bool specs = false;
  std::vector<std::string> input_shapes;
  std::string precision = "float32";
  std::string mixed_ops = "conv2d,dense";
  bool mixed_ops_given = false;
  bool split_activations = false;
};

// Returns the exit code: 0, or 2 for any bad input (each reported as one line).
int RunTasks(const TasksArgs& args) {
  ImportOptions import;
  auto shapes = ParseInputShapes(args.input_shapes);
  if (!shapes.ok()) return CommandError("tasks", shapes.status().message(), 2);
  import.input_shapes = std::move(*shapes);
  TaskListOptions options;
  auto precision = ParsePrecision(args.precision);
  if (!precision.ok()) return CommandError("tasks", "--precision: " + precision.status().message(), 2);
  options.precision.precision = *precision;
  auto ops = ParseMixedPrecisionOps(args.mixed_ops);
  if (!ops.ok()) return CommandError("tasks", ops.status().message(), 2);
  if (args.mixed_ops_given && *precision == Precision::kFloat32) {
    return CommandError("tasks", kMixedOpsWithoutPrecision, 2);
  }
  options.precision.ops = *ops;
  options.split_activations = args.split_activations;

  auto model = ImportOnnxFile(args.model, import);
  if (!model.ok()) return CommandError("tasks", model.status().message(), 2);
  std::vector<ModelTask> tasks = BuildModelTasks(*model, options);
  if (!args.json && !args.specs) {
    std::cout << FormatTaskTable(*model, tasks);
    return 0;
  }
  if (args.specs) {  // what `tune --task-file` reads
    std::vector<ListedTask> listed;
    for (const ModelTask& t : tasks) listed.push_back({t.task, t.count});
    std::cout << FormatTaskList(listed, model->name + ": " + std::to_string(tasks.size()) +
                                            " tasks, SPEC COUNT per line (tunefleet tune --task-file reads this)");
  } else {
    std::cout << TasksToJson(tasks).dump(2) << "\n";
  }
  // Flushed before the note, with the write's cause: writing std::cerr flushes std::cout (tied) and the failure's
  // errno was gone by the end ("write failed" without the reason).
  if (Status out = FlushStandardOutput(); !out.ok()) return CommandError("tasks", out.message());
  // The list is the contract on stdout; what was left out still deserves a word.
  std::string left;
  for (const auto& [op, n] : model->not_tuned) left += (left.empty() ? "" : ", ") + op + " x" + std::to_string(n);
  if (!left.empty()) std::cerr << "tunefleet tasks: note: not tuned: " << left << "\n";
  return 0;
}

}  // namespace

void RegisterTasks(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TasksArgs>();
  auto* sub = app.add_subcommand("tasks", "List the tuning tasks of an ONNX model (deduplicated, with counts)");
  sub->add_option("model", args->model, "ONNX model file")->required()->check(cli::NotEmpty());
  CLI::Option* json = sub->add_flag("--json", args->json, "Print a JSON array instead of a table");
  sub->add_flag("--specs", args->specs,
                "Print 'SPEC COUNT' lines instead of a table: a task file for `tunefleet tune --task-file`")
      ->excludes(json);
  sub->add_option("--input-shape", args->input_shapes,
                  "Shape of a graph input, name:1x3x224x224 (repeatable): gives its dynamic dims, or replaces its "
                  "static ones (the same rank)")
      ->check(cli::NotEmpty())
      ->expected(1)  // one value each time, repeatable, as tune's: the model path after it is the model
      ->allow_extra_args(false)
      ->take_all();
  sub->add_option("--precision", args->precision, "float32 | float16 | float16-acc32 (default float32)")
      ->check(cli::NotEmpty());
  CLI::Option* mixed = sub->add_option("--mixed-precision-ops", args->mixed_ops,
                                       "Op kinds that take --precision, the rest stay float32: "
                                       "conv2d,depthwise_conv2d,dense,pool,all (default conv2d,dense)")
                           ->check(cli::NotEmpty());
  sub->add_flag("--split-activations", args->split_activations,
                "Make the fused activation (act=relu|relu6) part of each task instead of grouping by workload");
  sub->callback([args, exit_code, mixed] {
    args->mixed_ops_given = mixed->count() > 0;
    *exit_code = RunTasks(*args);
  });
}

}  // namespace tunefleet

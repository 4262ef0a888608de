// `tunefleet tasks MODEL.onnx`: the tuning tasks of a model, deduplicated, as a table or JSON.
#include <iostream>
#include <memory>

#include "common/cli_checks.h"
#include "tuner/command.h"
#include "tuner/model_tasks.h"
#include "tuner/onnx_import.h"

namespace tunefleet {
namespace {

struct TasksArgs {
  std::string model;
  bool json = false;
  std::vector<std::string> input_shapes;
  std::string precision = "float32";
  std::string mixed_ops = "conv2d,dense";
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
  options.precision.ops = *ops;
  options.split_activations = args.split_activations;

  auto model = ImportOnnxFile(args.model, import);
  if (!model.ok()) return CommandError("tasks", model.status().message(), 2);
  std::vector<ModelTask> tasks = BuildModelTasks(*model, options);
  if (args.json) {
    std::cout << TasksToJson(tasks).dump(2) << "\n";
    // The array is the contract on stdout; what was left out still deserves a word.
    std::string left;
    for (const auto& [op, n] : model->not_tuned) left += (left.empty() ? "" : ", ") + op + " x" + std::to_string(n);
    if (!left.empty()) std::cerr << "tunefleet tasks: note: not tuned: " << left << "\n";
  } else {
    std::cout << FormatTaskTable(*model, tasks);
  }
  return 0;
}

}  // namespace

void RegisterTasks(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TasksArgs>();
  auto* sub = app.add_subcommand("tasks", "List the tuning tasks of an ONNX model (deduplicated, with counts)");
  sub->add_option("model", args->model, "ONNX model file")->required()->check(cli::NotEmpty());
  sub->add_flag("--json", args->json, "Print a JSON array instead of a table");
  sub->add_option("--input-shape", args->input_shapes,
                  "Shape of a graph input, name:1x3x224x224 (repeatable): gives its dynamic dims, or replaces its "
                  "static ones (the same rank)")
      ->check(cli::NotEmpty())
      ->expected(1)
      ->take_all();
  sub->add_option("--precision", args->precision, "float32 | float16 | float16-acc32 (default float32)")
      ->check(cli::NotEmpty());
  sub->add_option("--mixed-precision-ops", args->mixed_ops,
                  "Op kinds that take --precision, the rest stay float32: conv2d,depthwise_conv2d,dense,pool,all "
                  "(default conv2d,dense)")
      ->check(cli::NotEmpty());
  sub->add_flag("--split-activations", args->split_activations,
                "Make the fused activation (act=relu|relu6) part of each task instead of grouping by workload");
  sub->callback([args, exit_code] { *exit_code = RunTasks(*args); });
}

}  // namespace tunefleet

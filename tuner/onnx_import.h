// Model import: an ONNX file -> the tunable operator occurrences in it (Conv, Gemm/MatMul, pooling), with the
// shapes found by ONNX shape inference. Deduplication into tasks is model_tasks.h's job.
//
// Supported (each becomes one OpOccurrence), over float32 or float16 tensors (the task's precision is the tensors'
// type; model_tasks.h's precision policy may lower float32 ones):
//   Conv 2-D (regular, grouped, depthwise; stride, padding incl. auto_pad, dilation), fused with its bias and a
//     following Relu or Clip(0, 6) (of the ONNX domain) when the Conv's output feeds only that node;
//   Gemm (transB, alpha = 1, C as the bias with beta = 1, or ignored with beta = 0) and MatMul (2-D or batched A
//     against 2-D B, or equal batch), fused with a following Relu / Clip(0, 6) (and for MatMul an Add of a 1-D bias);
//   MaxPool, AveragePool, GlobalAveragePool (2-D, floor mode).
// Listed as not tuned, with a reason (NotTuned): every other operator, and supported operators whose attributes a
// task cannot state faithfully: tensors of another type ("int32 tensors", "float64 tensors"), asymmetric padding, an
// auto_pad that ONNX does not define, a stride or dilation that differs between H and W, transA, ceil_mode, non-2-D
// convolutions, shapes unknown after inference.
// Refused (the whole model, naming the node): shapes that contradict each other, and a Conv or pool whose window
// the model cannot run (larger than the padded input; for a pool also a pad not smaller than the window).
// Subgraphs: the nodes of control-flow subgraphs (If's then_branch and else_branch, Loop's and Scan's body; any GRAPH
// or GRAPHS attribute, at any depth) are extracted as the main graph's are, with the shapes shape inference found
// there and the enclosing graphs' tensors (weights, inputs) seen as ONNX's outer scope; fusion stays within one
// graph. Such a node is named by its place: "loop/body/mm", "loop/body/inner/then_branch/#0" (an unnamed node by its
// index in its graph). Where a subgraph's shapes are unknown (a Loop-carried value declared without dims: shape
// inference does not carry its shape into the body, for it may change from one iteration to the next), its ops are
// not tuned ("MatMul (shape unknown)"). An If, Loop or Scan whose subgraphs were walked is not itself counted as not
// tuned: its work is its subgraphs'; a node of another domain holding subgraphs still is (it does more than them).
// Each node, tuned or not, counts once per occurrence in the model's text: a Loop body's MatMul once, not once per
// iteration (the trip count is data), and the ops of both branches of an If once each, whichever runs.
// Thread safety: free functions over values; safe to call from several threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "search-spaces/task.h"

namespace onnx {
class ModelProto;
}

namespace tunefleet {

// One tunable node of the graph (plus the nodes fused into it).
struct OpOccurrence {
  std::string node;         // the node's name, or "#<index>" when unnamed; in a subgraph after its path: "loop/body/mm"
  std::string onnx_ops;     // the ONNX ops it covers, e.g. "Conv+Relu", "MatMul+Add"
  Task task;                // the workload in the tensors' type (float32 or float16), activation NOT included
  Activation activation = Activation::kNone;  // fused Relu (kRelu) or Clip(0, 6) (kRelu6)
  nlohmann::json workload;  // shapes and attributes: {"input": [..], "weight": [..], "output": [..], "strides": ..}
};

struct ImportedModel {
  std::string name;                         // the file path (or the name given to ImportOnnxModel)
  int64_t opset = 0;                        // of the default ("ai.onnx") domain
  // Tunable nodes in graph order, a node's subgraphs' (in its attribute order: then_branch before else_branch as
  // exporters write them) at its place.
  std::vector<OpOccurrence> ops;
  std::map<std::string, int64_t> not_tuned;  // "Add" -> 8, "Conv (asymmetric pads)" -> 1; subgraphs' nodes included
};

struct ImportOptions {
  // Values for the graph inputs' dynamic (or overridden) dims: name -> full shape. Given any, the shapes recorded in
  // the model (value_info; subgraphs' inputs and outputs too) are forgotten and inferred again.
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

// Parses one "--input-shape" value "name:1x3x224x224" (also "name:[1,3,224,224]").
Result<std::pair<std::string, std::vector<int64_t>>> ParseInputShape(std::string_view text);

// Parses every "--input-shape" value; an input named twice is refused (the last one won without a word).
Result<std::map<std::string, std::vector<int64_t>>> ParseInputShapes(const std::vector<std::string>& texts);

// Reads, validates and imports an ONNX file. Every error is one line that names the file: not an ONNX file,
// a truncated file, an opset this build does not know, dynamic dims without an --input-shape, no tunable operator
// (the message counts the nodes of every graph, subgraphs included, and says how many were in subgraphs).
Result<ImportedModel> ImportOnnxFile(const std::string& path, const ImportOptions& options);

// The same for a model already in memory (tests, generated models). `name` is used in messages.
// `model` is modified in place (input shapes set, shapes inferred).
Result<ImportedModel> ImportOnnxModel(onnx::ModelProto& model, const std::string& name, const ImportOptions& options);

}  // namespace tunefleet

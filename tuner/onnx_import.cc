#include "tuner/onnx_import.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include "common/printable.h"
#include "search-spaces/op_signature.h"
#include "tuner/isolated_shape_inference.h"
#include "tuner/onnx_graph_view.h"
#include "tuner/onnx_op_extract.h"

namespace tunefleet {
namespace {

std::string DimsText(const onnx::TensorShapeProto& shape) {
  std::string s = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    if (i) s += ",";
    const auto& d = shape.dim(i);
    s += d.has_dim_value() ? std::to_string(d.dim_value()) : (d.dim_param().empty() ? "?" : d.dim_param());
  }
  return s + "]";
}

std::string ShapeText(const std::vector<int64_t>& dims, char sep) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? std::string(1, sep) : "") + std::to_string(dims[i]);
  return s;
}

// The default-domain opset, checked against what this build's operator registry knows.
Result<int64_t> CheckOpsets(const onnx::ModelProto& model) {
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  int64_t opset = 0;
  for (const auto& imp : model.opset_import()) {
    const std::string domain = imp.domain() == "ai.onnx" ? "" : imp.domain();
    auto it = known.find(domain);
    if (it == known.end()) continue;  // a custom domain: its nodes are listed as not tuned
    if (imp.version() < 1 || imp.version() > it->second.second) {
      return Status::InvalidArgument("opset " + std::to_string(imp.version()) + " of domain '" +
                                     (domain.empty() ? "ai.onnx" : domain) + "' is unknown to this build (it knows " +
                                     std::to_string(it->second.first) + " to " + std::to_string(it->second.second) +
                                     ")");
    }
    if (domain.empty()) opset = imp.version();
  }
  if (opset == 0) return Status::InvalidArgument("no opset_import for the ai.onnx domain (truncated file?)");
  return opset;
}

// Forgets the shapes recorded in the subgraphs of `graph`'s nodes, at any depth: their value_info, and the shapes of
// their inputs and outputs (element types are kept). A Loop-carried value's shape, which shape inference does not
// carry into the body, is then unknown, and the ops that read it are not tuned rather than tuned at the old shape.
void ClearSubgraphShapes(onnx::GraphProto* graph) {
  const auto clear = [](onnx::ValueInfoProto& vi) {
    if (vi.type().has_tensor_type()) vi.mutable_type()->mutable_tensor_type()->clear_shape();
  };
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
      std::vector<onnx::GraphProto*> subgraphs;
      if (a.type() == onnx::AttributeProto::GRAPH && a.has_g()) subgraphs.push_back(a.mutable_g());
      if (a.type() == onnx::AttributeProto::GRAPHS) {
        for (onnx::GraphProto& g : *a.mutable_graphs()) subgraphs.push_back(&g);
      }
      for (onnx::GraphProto* g : subgraphs) {
        g->clear_value_info();
        for (auto& vi : *g->mutable_input()) clear(vi);
        for (auto& vi : *g->mutable_output()) clear(vi);
        ClearSubgraphShapes(g);
      }
    }
  }
}

// An --input-shape value for an input of `shape`, as an example: its known dims as they are, each dynamic one 1 (a
// batch, most often); an input of no shape at all gets an image's.
std::string ExampleDims(const onnx::TensorShapeProto& shape) {
  if (shape.dim_size() == 0) return "1x3x224x224";
  std::string out;
  for (const auto& d : shape.dim()) {
    out += (out.empty() ? "" : "x") + std::to_string(d.has_dim_value() ? d.dim_value() : 1);
  }
  return out;
}

// Applies --input-shape values and rejects graph inputs left with dynamic dims.
Status FixInputShapes(onnx::GraphProto* graph, const ImportOptions& options) {
  std::set<std::string> initializers;
  for (const auto& t : graph->initializer()) initializers.insert(t.name());
  // A misnamed --input-shape is said first: a model with a dynamic input said that input's dims were missing, as if
  // the name given had not been given.
  std::set<std::string> inputs;
  std::string names;
  for (const auto& in : graph->input()) {
    if (initializers.count(in.name()) || !inputs.insert(in.name()).second) continue;
    names += (names.empty() ? "" : ", ") + in.name();
  }
  for (const auto& [name, dims] : options.input_shapes) {
    if (!inputs.count(name)) {
      return Status::InvalidArgument("--input-shape names '" + name + "', which is not a graph input (inputs: " +
                                     names + ")");
    }
  }
  std::set<std::string> used;
  for (auto& in : *graph->mutable_input()) {
    if (initializers.count(in.name())) continue;
    // Asked before mutable_shape() sets the field: an input of no shape at all is dynamic, not a scalar.
    const bool shapeless = !in.type().tensor_type().has_shape();
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (auto it = options.input_shapes.find(in.name()); it != options.input_shapes.end()) {
      used.insert(in.name());
      if (shape->dim_size() != 0 && shape->dim_size() != static_cast<int>(it->second.size())) {
        return Status::InvalidArgument("--input-shape " + in.name() + ":" + ShapeText(it->second, 'x') + " has rank " +
                                       std::to_string(it->second.size()) + " but the input's shape is " +
                                       DimsText(*shape));
      }
      shape->clear_dim();
      for (int64_t d : it->second) shape->add_dim()->set_dim_value(d);
      continue;
    }
    bool dynamic = shapeless;
    for (const auto& d : shape->dim()) {
      if (d.has_dim_value() && d.dim_value() <= 0)
        return Status::InvalidArgument("input '" + in.name() + "' has a dim of " + std::to_string(d.dim_value()) +
                                       " in " + DimsText(*shape) + " (dims are 1 or more); give its shape with "
                                       "--input-shape " + in.name() + ":1x3x224x224 (for example)");
      dynamic = dynamic || !d.has_dim_value();
    }
    if (shapeless) {
      return Status::InvalidArgument("input '" + in.name() + "' has no shape; give it with --input-shape " +
                                     in.name() + ":" + ExampleDims(*shape) + " (for example)");
    }
    if (dynamic) {
      return Status::InvalidArgument("input '" + in.name() + "' has dynamic dims " + DimsText(*shape) +
                                     "; give them with --input-shape " + in.name() + ":" + ExampleDims(*shape) +
                                     " (for example)");
    }
  }
  if (!used.empty()) {
    // Shapes recorded for the old input shape would contradict the new ones: let inference recompute them.
    graph->clear_value_info();
    for (auto& out : *graph->mutable_output()) out.mutable_type()->mutable_tensor_type()->clear_shape();
    ClearSubgraphShapes(graph);
  }
  return Status::OK();
}

}  // namespace

Result<std::pair<std::string, std::vector<int64_t>>> ParseInputShape(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("--input-shape '" + std::string(text) + "': " + why +
                                   " (expected name:1x3x224x224)");
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad("no 'name:' before the dims");
  std::string name(text.substr(0, colon));
  std::string dims(text.substr(colon + 1));
  if (dims.size() >= 2 && dims.front() == '[' && dims.back() == ']') dims = dims.substr(1, dims.size() - 2);
  const char sep = dims.find(',') != std::string::npos ? ',' : 'x';
  if (!dims.empty() && dims.back() == sep) return bad("a dim after the last '" + std::string(1, sep) + "' is missing");
  std::vector<int64_t> out;
  std::string part;
  std::istringstream in(dims);
  while (std::getline(in, part, sep)) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || errno != 0 || v <= 0) return bad("'" + part + "' is not a positive size");
    // A task's sizes are bounded (op_signature.h): a larger dim made every layer it reaches a rejected task, listed
    // as not tuned, and `tune` went on with the rest of the model.
    if (v > kMaxTaskSize) return bad("'" + part + "' is larger than " + std::to_string(kMaxTaskSize));
    out.push_back(v);
  }
  if (out.empty()) return bad("no dims");
  return std::make_pair(name, out);
}

Result<std::map<std::string, std::vector<int64_t>>> ParseInputShapes(const std::vector<std::string>& texts) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& text : texts) {
    TF_ASSIGN_OR_RETURN(auto shape, ParseInputShape(text));
    if (shapes.count(shape.first) != 0) {
      return Status::InvalidArgument("--input-shape names the input '" + shape.first + "' twice (" +
                                     ShapeText(shapes[shape.first], 'x') + " and " + ShapeText(shape.second, 'x') +
                                     "); give each input once");
    }
    shapes.emplace(std::move(shape));
  }
  return shapes;
}

namespace {

using google::protobuf::io::CodedInputStream;

// Whether `bytes`, which protobuf's default reader refused, are a whole model nested past its recursion limit (If
// and Loop subgraphs within subgraphs): read again with a limit 10 times higher, they parse. Such a model was called
// truncated.
bool NestedTooDeep(const std::string& bytes) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return false;
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  in.SetRecursionLimit(10 * CodedInputStream::GetDefaultRecursionLimit());
  onnx::ModelProto model;
  return model.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

}  // namespace

Result<ImportedModel> ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  // Read only a regular file, of at most the 2 GiB a protobuf holds: a directory threw from the read, and
  // /dev/zero was read until memory ran out.
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    return Status::InvalidArgument(path + (std::filesystem::is_directory(path, ec) ? ": a directory" : ": not a file") +
                                   ", not an ONNX model");
  }
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > (uint64_t{2} << 30)) {
    return Status::InvalidArgument(path + ": larger than 2 GiB, the most an ONNX model holds");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.empty()) return Status::InvalidArgument(path + ": empty file, not an ONNX model");
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    // Every ONNX writer puts ir_version (field 1, varint: tag 0x08) first.
    if (bytes[0] != '\x08') return Status::InvalidArgument(path + ": not an ONNX model (not a ModelProto protobuf)");
    model.Clear();  // what the failed parse filled: a second copy of the model while it is read again
    if (NestedTooDeep(bytes)) {
      return Status::InvalidArgument(path + ": the ONNX model nests messages (subgraphs) more than " +
                                     std::to_string(CodedInputStream::GetDefaultRecursionLimit()) +
                                     " levels deep, past what protobuf reads");
    }
    return Status::InvalidArgument(path + ": truncated or corrupt ONNX model (protobuf parse failed after " +
                                   std::to_string(bytes.size()) + " bytes)");
  }
  return ImportOnnxModel(model, path, options);
}

namespace {

// Strides and dilations are 1 or more (the ONNX operators' definition). Checked before shape inference, which
// divides by them (libonnx's convPoolShapeInference died of SIGFPE on a stride of 0), in subgraphs too (`scope`, as
// OnnxGraphView::Scope says it), where shape inference goes as well.
Status CheckWindowAttributes(const onnx::GraphProto& graph, const std::string& scope) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() != "strides" && a.name() != "dilations") continue;
      for (int64_t v : a.ints()) {
        if (v < 1) {
          return Status::InvalidArgument("node '" + ScopedNodeName(scope, node, i) + "' (" + node.op_type() + "): " +
                                         a.name() + " " + std::to_string(v) + " (each must be 1 or more)");
        }
      }
    }
    for (const auto& [label, sub] : Subgraphs(node)) {
      TF_RETURN_IF_ERROR(CheckWindowAttributes(*sub, ScopedNodeName(scope, node, i) + "/" + label + "/"));
    }
  }
  return Status::OK();
}

// Each value is assigned once (ONNX's static single assignment), in subgraphs too, which see the values of the
// graphs around them: a node's output that a graph input, an initializer or an earlier node's output already names
// makes no valid model (two MatMuls writing "y" were tuned as two layers of one workload). `assigned` holds the
// values of the graphs around `graph`, each with what assigns it; `scope` names the nodes as OnnxGraphView does.
Status CheckSingleAssignment(const onnx::GraphProto& graph, const std::string& scope,
                             std::map<std::string, std::string> assigned) {
  for (const auto& in : graph.input()) assigned.emplace(in.name(), "a graph input");
  for (const auto& t : graph.initializer()) assigned.emplace(t.name(), "an initializer");
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const std::string self = "node '" + ScopedNodeName(scope, node, i) + "' (" + node.op_type() + ")";
    for (const auto& [label, sub] : Subgraphs(node)) {
      TF_RETURN_IF_ERROR(CheckSingleAssignment(*sub, ScopedNodeName(scope, node, i) + "/" + label + "/", assigned));
    }
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;  // an optional output left out
      auto [at, added] = assigned.emplace(out, self);
      if (!added) {
        return Status::InvalidArgument(self + " writes '" + Printable(out, 80) + "', which " + at->second +
                                       " assigns already (an ONNX graph assigns each value once)");
      }
    }
  }
  return Status::OK();
}

// ONNX's control-flow operators, whose work is all in their subgraphs (an If's branches, a Loop's or Scan's body).
bool IsControlFlow(const onnx::NodeProto& node) {
  const std::string& t = node.op_type();
  return (node.domain().empty() || node.domain() == "ai.onnx") && (t == "If" || t == "Loop" || t == "Scan");
}

// The nodes ExtractGraph went through, for the message of a model with no tunable operator.
struct NodeCount {
  int64_t all = 0;           // of every graph
  int64_t in_subgraphs = 0;  // of those, in subgraphs
};

// Appends the tunable operators of `view`'s graph to out->ops in graph order, each node's subgraphs (walked with
// views nested in `view`, at any depth) at the node's place, and counts the other nodes in out->not_tuned. Fusion
// stays within one graph: ExtractNode fuses only nodes of `graph`, and a node holding subgraphs reads, as the view
// sees it, what they read. A contradiction is an InvalidArgument naming the node.
Status ExtractGraph(const onnx::GraphProto& graph, const OnnxGraphView& view, int64_t opset, ImportedModel* out,
                    NodeCount* count) {
  std::set<int> fused;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    ++count->all;
    if (!view.Scope().empty()) ++count->in_subgraphs;
    if (fused.count(i) || node.op_type() == "Constant") continue;  // Constant is data, not work
    const auto subgraphs = Subgraphs(node);
    for (const auto& [label, sub] : subgraphs) {
      const OnnxGraphView sub_view(*sub, view, view.NodeName(node, i) + "/" + label + "/");
      TF_RETURN_IF_ERROR(ExtractGraph(*sub, sub_view, opset, out, count));
    }
    if (!subgraphs.empty() && IsControlFlow(node)) continue;  // its work was its subgraphs'
    ExtractedNode e = ExtractNode(graph, view, i, opset);
    if (!e.contradiction.empty()) return Status::InvalidArgument(e.contradiction);
    if (e.op) {
      out->ops.push_back(std::move(*e.op));
      fused.insert(e.fused.begin(), e.fused.end());
    } else if ((node.domain().empty() || node.domain() == "ai.onnx") &&
               onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "") == nullptr) {
      // Not an operator of ONNX at this opset (a misspelt or custom op type): say so, for it may be the cause.
      ++out->not_tuned[Printable(node.op_type(), 64, PrintableBytes::kAsciiOnly) + " (not an ONNX operator)"];
    } else {
      // Long enough for a rejected task's spec and the bound it passes ("its sizes multiply to more than 2^62").
      ++out->not_tuned[Printable(e.not_tuned, 240, PrintableBytes::kAsciiOnly)];
    }
  }
  return Status::OK();
}

}  // namespace

Result<ImportedModel> ImportOnnxModel(onnx::ModelProto& model, const std::string& name, const ImportOptions& options) {
  if (model.ir_version() <= 0 || !model.has_graph()) {
    return Status::InvalidArgument(name + ": not an ONNX model (no ir_version or no graph)");
  }
  if (model.ir_version() > onnx::IR_VERSION) {
    return Status::InvalidArgument(name + ": IR version " + std::to_string(model.ir_version()) +
                                   " is newer than this build supports (" + std::to_string(onnx::IR_VERSION) + ")");
  }
  auto opset = CheckOpsets(model);
  if (!opset.ok()) return opset.status().WithContext(name);
  TF_RETURN_IF_ERROR(FixInputShapes(model.mutable_graph(), options).WithContext(name));
  TF_RETURN_IF_ERROR(CheckWindowAttributes(model.graph(), "").WithContext(name));
  TF_RETURN_IF_ERROR(CheckSingleAssignment(model.graph(), "", {}).WithContext(name));
  TF_RETURN_IF_ERROR(InferShapesIsolated(model).WithContext(name));

  ImportedModel out;
  out.name = name;
  out.opset = *opset;
  const OnnxGraphView view(model.graph());
  NodeCount count;
  TF_RETURN_IF_ERROR(ExtractGraph(model.graph(), view, *opset, &out, &count).WithContext(name));
  if (out.ops.empty()) {
    std::string ops;
    for (const auto& [op, n] : out.not_tuned) ops += (ops.empty() ? "" : ", ") + op + " x" + std::to_string(n);
    const std::string where =
        count.in_subgraphs == 0 ? "" : " (" + std::to_string(count.in_subgraphs) + " of them in subgraphs)";
    return Status::InvalidArgument(name + ": no tunable operator (Conv, Gemm, MatMul, MaxPool, AveragePool, "
                                          "GlobalAveragePool) among " + std::to_string(count.all) + " nodes" + where +
                                   (ops.empty() ? "" : ": " + ops));
  }
  return out;
}

}  // namespace tunefleet

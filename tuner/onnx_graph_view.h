// Read-only lookups over one graph of an ONNX model after shape inference: tensor shapes and element types by name,
// the consumers of a tensor, constant tensors (initializers and Constant nodes), node attributes, the subgraphs a
// node holds. Used by onnx_import.cc only.
// A subgraph's view (an If branch, a Loop or Scan body) sees the enclosing graphs' tensors as ONNX's outer scope
// does: a tensor the subgraph does not define (as an input, an initializer or a node's output) is looked up in the
// enclosing views, nearest first; one it defines is its own, known or not (it shadows an outer one of its name).
// Consumers and graph outputs are the graph's own, and a node holding subgraphs counts as a consumer of every tensor
// they read, so that nothing is fused across a subgraph's boundary.
// Ownership: borrows the GraphProto and the enclosing view, which must outlive the view and not change while it is
// used.
// Thread safety: immutable after construction.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

namespace tunefleet {

class OnnxGraphView {
 public:
  // The view of the model's main graph.
  explicit OnnxGraphView(const onnx::GraphProto& graph);
  // The view of a subgraph nested in `outer`'s graph. `scope` prefixes its nodes' names: "loop/body/".
  OnnxGraphView(const onnx::GraphProto& graph, const OnnxGraphView& outer, std::string scope);

  // "" for the main graph, else the path of the subgraph ending in '/': "loop/body/", "loop/body/#2/then_branch/".
  const std::string& Scope() const { return scope_; }
  // The name messages and tasks give a node of this graph (ScopedNodeName in Scope()).
  std::string NodeName(const onnx::NodeProto& node, int index) const;

  // The shape of a tensor, unknown dims as -1; nullopt when not even the rank is known.
  std::optional<std::vector<int64_t>> Shape(const std::string& tensor) const;
  // The shape when every dim is known, else nullopt.
  std::optional<std::vector<int64_t>> StaticShape(const std::string& tensor) const;
  // The element type (onnx::TensorProto::DataType: FLOAT, FLOAT16, INT32, ...); UNDEFINED when not known.
  int32_t ElemType(const std::string& tensor) const;
  // Indices of the nodes of this graph that read `tensor`, through an input or in a subgraph they hold.
  const std::vector<int>& Consumers(const std::string& tensor) const;
  bool IsGraphOutput(const std::string& tensor) const { return graph_outputs_.count(tensor) > 0; }
  // An initializer or Constant output; nullptr otherwise. Its data may be missing (stripped weights).
  const onnx::TensorProto* Constant(const std::string& tensor) const;
  // The float values of a constant tensor; nullopt when absent, not float, or its data was stripped.
  std::optional<std::vector<float>> ConstantFloats(const std::string& tensor) const;

 private:
  OnnxGraphView(const onnx::GraphProto& graph, const OnnxGraphView* outer, std::string scope);

  const OnnxGraphView* outer_ = nullptr;  // the enclosing graph's view; null for the main graph
  std::string scope_;
  std::unordered_set<std::string> defined_;  // the graph's inputs, initializers and node outputs
  std::unordered_map<std::string, std::vector<int64_t>> shapes_;
  std::unordered_map<std::string, int32_t> elem_types_;  // only known (not UNDEFINED) types
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_map<std::string, const onnx::TensorProto*> constants_;
  std::set<std::string> graph_outputs_;
};

// Attribute helpers: the value of attribute `name` of `node`, or `fallback` when absent.
int64_t AttrInt(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
float AttrFloat(const onnx::NodeProto& node, const std::string& name, float fallback);
std::string AttrString(const onnx::NodeProto& node, const std::string& name, const std::string& fallback);
std::vector<int64_t> AttrInts(const onnx::NodeProto& node, const std::string& name,
                              const std::vector<int64_t>& fallback);

// The name messages and tasks give the node at `index` of a graph whose scope is `scope` ("" for the main graph,
// "loop/body/" for a subgraph): scope + its name, or scope + "#<index>" when it has none.
std::string ScopedNodeName(const std::string& scope, const onnx::NodeProto& node, int index);

// The graphs of a node's GRAPH and GRAPHS attributes (an If's "then_branch" and "else_branch", a Loop's or Scan's
// "body"), in the node's attribute order, each with its label: the attribute's name, "name[i]" in a GRAPHS list.
std::vector<std::pair<std::string, const onnx::GraphProto*>> Subgraphs(const onnx::NodeProto& node);

// The name of an element type as the tasks and numpy say it: "float32", "float16", "float64", "int32", "bool", ...
std::string ElemTypeName(int32_t elem_type);

}  // namespace tunefleet

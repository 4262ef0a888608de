// Read-only lookups over an ONNX graph after shape inference: tensor shapes and element types by name, the
// consumers of a tensor,
// constant tensors (initializers and Constant nodes), node attributes. Used by onnx_import.cc only.
// Ownership: borrows the GraphProto, which must outlive the view and not change while it is used.
// Thread safety: immutable after construction.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

namespace tunefleet {

class OnnxGraphView {
 public:
  explicit OnnxGraphView(const onnx::GraphProto& graph);

  // The shape of a tensor, unknown dims as -1; nullopt when not even the rank is known.
  std::optional<std::vector<int64_t>> Shape(const std::string& tensor) const;
  // The shape when every dim is known, else nullopt.
  std::optional<std::vector<int64_t>> StaticShape(const std::string& tensor) const;
  // The element type (onnx::TensorProto::DataType: FLOAT, FLOAT16, INT32, ...); UNDEFINED when not known.
  int32_t ElemType(const std::string& tensor) const;
  // Indices of the nodes that read `tensor`.
  const std::vector<int>& Consumers(const std::string& tensor) const;
  bool IsGraphOutput(const std::string& tensor) const { return graph_outputs_.count(tensor) > 0; }
  // An initializer or Constant output; nullptr otherwise. Its data may be missing (stripped weights).
  const onnx::TensorProto* Constant(const std::string& tensor) const;
  // The float values of a constant tensor; nullopt when absent, not float, or its data was stripped.
  std::optional<std::vector<float>> ConstantFloats(const std::string& tensor) const;

 private:
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

// The name of an element type as the tasks and numpy say it: "float32", "float16", "float64", "int32", "bool", ...
std::string ElemTypeName(int32_t elem_type);

}  // namespace tunefleet

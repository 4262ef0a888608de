#include "tuner/onnx_graph_view.h"

#include <cctype>
#include <cstring>
#include <utility>

namespace tunefleet {
namespace {

void AddValueInfo(const onnx::ValueInfoProto& vi, std::unordered_map<std::string, std::vector<int64_t>>* shapes,
                  std::unordered_map<std::string, int32_t>* elem_types) {
  if (!vi.type().has_tensor_type()) return;
  if (const int32_t t = vi.type().tensor_type().elem_type(); t != onnx::TensorProto::UNDEFINED) {
    (*elem_types)[vi.name()] = t;
  }
  if (!vi.type().tensor_type().has_shape()) return;
  std::vector<int64_t> dims;
  for (const auto& d : vi.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  (*shapes)[vi.name()] = std::move(dims);
}

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

// The names a subgraph reads, at any depth: its nodes' inputs and its outputs (an output may be an outer tensor
// itself). Names it defines are among them too, which is harmless: the enclosing graph does not define them (or, if
// the subgraph shadows one, it only keeps a fusion from being made).
void CollectReads(const onnx::GraphProto& graph, std::unordered_set<std::string>* reads) {
  for (const auto& node : graph.node()) {
    for (const auto& in : node.input()) {
      if (!in.empty()) reads->insert(in);
    }
    for (const auto& [label, sub] : Subgraphs(node)) CollectReads(*sub, reads);
  }
  for (const auto& out : graph.output()) reads->insert(out.name());
}

}  // namespace

OnnxGraphView::OnnxGraphView(const onnx::GraphProto& graph) : OnnxGraphView(graph, nullptr, "") {}

OnnxGraphView::OnnxGraphView(const onnx::GraphProto& graph, const OnnxGraphView& outer, std::string scope)
    : OnnxGraphView(graph, &outer, std::move(scope)) {}

OnnxGraphView::OnnxGraphView(const onnx::GraphProto& graph, const OnnxGraphView* outer, std::string scope)
    : outer_(outer), scope_(std::move(scope)) {
  // Initializers first: their dims are known even when their data was stripped; value_info may refine.
  for (const auto& t : graph.initializer()) {
    shapes_[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
    if (t.data_type() != onnx::TensorProto::UNDEFINED) elem_types_[t.name()] = t.data_type();
    constants_[t.name()] = &t;
    defined_.insert(t.name());
  }
  for (const auto& vi : graph.input()) {
    AddValueInfo(vi, &shapes_, &elem_types_);
    defined_.insert(vi.name());
  }
  for (const auto& vi : graph.value_info()) AddValueInfo(vi, &shapes_, &elem_types_);
  for (const auto& vi : graph.output()) {
    AddValueInfo(vi, &shapes_, &elem_types_);
    graph_outputs_.insert(vi.name());
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    for (const auto& in : node.input()) {
      if (!in.empty()) consumers_[in].push_back(i);
    }
    for (const auto& out : node.output()) {
      if (!out.empty()) defined_.insert(out);
    }
    std::unordered_set<std::string> reads;
    for (const auto& [label, sub] : Subgraphs(node)) CollectReads(*sub, &reads);
    for (const auto& r : reads) consumers_[r].push_back(i);
    if (node.op_type() == "Constant" && node.output_size() == 1) {
      if (const auto* a = FindAttr(node, "value"); a != nullptr && a->has_t()) constants_[node.output(0)] = &a->t();
    }
  }
}

std::string OnnxGraphView::NodeName(const onnx::NodeProto& node, int index) const {
  return ScopedNodeName(scope_, node, index);
}

// Each lookup: this graph's record, else nothing when this graph defines the tensor, else the enclosing graph's.
std::optional<std::vector<int64_t>> OnnxGraphView::Shape(const std::string& tensor) const {
  for (const OnnxGraphView* v = this; v != nullptr; v = v->outer_) {
    if (auto it = v->shapes_.find(tensor); it != v->shapes_.end()) return it->second;
    if (v->defined_.count(tensor)) break;
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> OnnxGraphView::StaticShape(const std::string& tensor) const {
  auto s = Shape(tensor);
  if (!s) return std::nullopt;
  for (int64_t d : *s) {
    if (d < 0) return std::nullopt;
  }
  return s;
}

int32_t OnnxGraphView::ElemType(const std::string& tensor) const {
  for (const OnnxGraphView* v = this; v != nullptr; v = v->outer_) {
    if (auto it = v->elem_types_.find(tensor); it != v->elem_types_.end()) return it->second;
    if (v->defined_.count(tensor)) break;
  }
  return onnx::TensorProto::UNDEFINED;
}

const std::vector<int>& OnnxGraphView::Consumers(const std::string& tensor) const {
  static const std::vector<int> kNone;
  auto it = consumers_.find(tensor);
  return it == consumers_.end() ? kNone : it->second;
}

const onnx::TensorProto* OnnxGraphView::Constant(const std::string& tensor) const {
  for (const OnnxGraphView* v = this; v != nullptr; v = v->outer_) {
    if (auto it = v->constants_.find(tensor); it != v->constants_.end()) return it->second;
    if (v->defined_.count(tensor)) break;
  }
  return nullptr;
}

std::optional<std::vector<float>> OnnxGraphView::ConstantFloats(const std::string& tensor) const {
  const onnx::TensorProto* t = Constant(tensor);
  if (t == nullptr || t->data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
  // The element count, without overflow: dims of 2^62 made n * 4 wrap to the size of an empty raw_data, and the
  // vector of 2^62 floats threw. The constants read here are a few values (a Clip's bounds).
  constexpr int64_t kMaxElements = int64_t{1} << 24;
  int64_t n = 1;
  for (int64_t d : t->dims()) {
    if (d < 0 || (d > 0 && n > kMaxElements / d)) return std::nullopt;
    n *= d;
  }
  if (t->float_data_size() == n) return std::vector<float>(t->float_data().begin(), t->float_data().end());
  if (t->has_raw_data() && t->raw_data().size() == static_cast<size_t>(n) * sizeof(float)) {
    std::vector<float> v(n);
    std::memcpy(v.data(), t->raw_data().data(), t->raw_data().size());  // ONNX raw data is little-endian
    return v;
  }
  return std::nullopt;
}

int64_t AttrInt(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const auto* a = FindAttr(node, name);
  return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

float AttrFloat(const onnx::NodeProto& node, const std::string& name, float fallback) {
  const auto* a = FindAttr(node, name);
  return a != nullptr && a->type() == onnx::AttributeProto::FLOAT ? a->f() : fallback;
}

std::string AttrString(const onnx::NodeProto& node, const std::string& name, const std::string& fallback) {
  const auto* a = FindAttr(node, name);
  return a != nullptr && a->type() == onnx::AttributeProto::STRING ? a->s() : fallback;
}

std::vector<int64_t> AttrInts(const onnx::NodeProto& node, const std::string& name,
                              const std::vector<int64_t>& fallback) {
  const auto* a = FindAttr(node, name);
  if (a == nullptr || a->type() != onnx::AttributeProto::INTS) return fallback;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string ScopedNodeName(const std::string& scope, const onnx::NodeProto& node, int index) {
  return scope + (node.name().empty() ? "#" + std::to_string(index) : node.name());
}

std::vector<std::pair<std::string, const onnx::GraphProto*>> Subgraphs(const onnx::NodeProto& node) {
  std::vector<std::pair<std::string, const onnx::GraphProto*>> out;
  for (const auto& a : node.attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPH && a.has_g()) out.emplace_back(a.name(), &a.g());
    if (a.type() != onnx::AttributeProto::GRAPHS) continue;
    for (int i = 0; i < a.graphs_size(); ++i) out.emplace_back(a.name() + "[" + std::to_string(i) + "]", &a.graphs(i));
  }
  return out;
}

std::string ElemTypeName(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT: return "float32";
    case onnx::TensorProto::DOUBLE: return "float64";
    case onnx::TensorProto::UNDEFINED: return "unknown";
    default: break;
  }
  // INT32 -> "int32", BOOL -> "bool", FLOAT16 -> "float16", BFLOAT16 -> "bfloat16"; a number out of the enum
  // (a damaged file) as itself.
  if (!onnx::TensorProto::DataType_IsValid(elem_type)) return "type " + std::to_string(elem_type);
  std::string name = onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace tunefleet

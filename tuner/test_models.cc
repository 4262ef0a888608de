#include "tuner/test_models.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace tunefleet {
namespace {

// Appends nodes and initializers to one graph; names tensors "t<N>" and weights "<node>.w" / "<node>.b".
class GraphBuilder {
 public:
  GraphBuilder(onnx::GraphProto* graph, int64_t channels, int64_t height, int64_t width) : graph_(graph) {
    auto* in = graph_->add_input();
    in->set_name("data");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {int64_t{1}, channels, height, width}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }

  // Conv with bias; returns the output tensor.
  std::string Conv(const std::string& x, int64_t c_in, int64_t c_out, int64_t k, int64_t stride, int64_t group = 1) {
    const std::string name = "conv" + std::to_string(++convs_);
    auto* node = AddNode("Conv", name, {x, Weight(name + ".w", {c_out, c_in / group, k, k}),
                                        Weight(name + ".b", {c_out})});
    SetInts(node, "kernel_shape", {k, k});
    SetInts(node, "strides", {stride, stride});
    SetInts(node, "pads", {k / 2, k / 2, k / 2, k / 2});
    if (group != 1) SetInt(node, "group", group);
    return node->output(0);
  }
  std::string Relu(const std::string& x) { return AddNode("Relu", "", {x})->output(0); }
  std::string Relu6(const std::string& x) {
    if (clip_min_.empty()) {
      clip_min_ = Scalar("clip.min", 0.0f);
      clip_max_ = Scalar("clip.max", 6.0f);
    }
    return AddNode("Clip", "", {x, clip_min_, clip_max_})->output(0);
  }
  std::string Add(const std::string& a, const std::string& b) { return AddNode("Add", "", {a, b})->output(0); }
  std::string GlobalAveragePool(const std::string& x) { return AddNode("GlobalAveragePool", "", {x})->output(0); }
  std::string Flatten(const std::string& x) { return AddNode("Flatten", "", {x})->output(0); }
  std::string Dense(const std::string& x, int64_t in, int64_t out) {
    auto* node = AddNode("Gemm", "fc", {x, Weight("fc.w", {out, in}), Weight("fc.b", {out})});
    SetInt(node, "transB", 1);
    return node->output(0);
  }
  void Output(const std::string& y, int64_t classes) {
    auto* out = graph_->add_output();
    out->set_name(y);
    auto* tt = out->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(1);
    tt->mutable_shape()->add_dim()->set_dim_value(classes);
  }

 private:
  onnx::NodeProto* AddNode(const std::string& op, std::string name, const std::vector<std::string>& inputs) {
    auto* node = graph_->add_node();
    if (name.empty()) name = op + std::to_string(graph_->node_size());
    node->set_name(name);
    node->set_op_type(op);
    for (const auto& i : inputs) node->add_input(i);
    node->add_output("t" + std::to_string(++tensors_));
    return node;
  }
  std::string Weight(const std::string& name, const std::vector<int64_t>& dims) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) {
      seed_ = seed_ * 6364136223846793005ULL + 1442695040888963407ULL;  // LCG: deterministic small weights
      t->add_float_data(static_cast<float>(static_cast<int64_t>(seed_ >> 40) % 1000) * 1e-4f);
    }
    return name;
  }
  std::string Scalar(const std::string& name, float v) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(v);
    return name;
  }
  static void SetInts(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void SetInt(onnx::NodeProto* node, const std::string& name, int64_t v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }

  onnx::GraphProto* graph_;  // not owned
  int convs_ = 0;
  int tensors_ = 0;
  uint64_t seed_ = 42;
  std::string clip_min_, clip_max_;
};

onnx::ModelProto NewModel(const std::string& graph_name) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.set_producer_name("tunefleet test_models");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  m.mutable_graph()->set_name(graph_name);
  return m;
}

}  // namespace

onnx::ModelProto MakeResNetLikeModel() {
  onnx::ModelProto m = NewModel("resnet_like");
  GraphBuilder g(m.mutable_graph(), 3, 32, 32);
  std::string x = g.Relu(g.Conv("data", 3, 16, 3, 1));
  for (int block = 0; block < 2; ++block) {
    std::string y = g.Relu(g.Conv(x, 16, 16, 3, 1));
    y = g.Conv(y, 16, 16, 3, 1);
    x = g.Relu(g.Add(y, x));
  }
  std::string y = g.Relu(g.Conv(x, 16, 32, 3, 2));
  y = g.Conv(y, 32, 32, 3, 1);
  std::string shortcut = g.Conv(x, 16, 32, 1, 2);
  x = g.Relu(g.Add(y, shortcut));
  std::string out = g.Dense(g.Flatten(g.GlobalAveragePool(x)), 32, 10);
  g.Output(out, 10);
  return m;
}

onnx::ModelProto MakeMobileNetLikeModel() {
  onnx::ModelProto m = NewModel("mobilenet_like");
  GraphBuilder g(m.mutable_graph(), 3, 32, 32);
  std::string x = g.Relu6(g.Conv("data", 3, 16, 3, 2));
  for (int block = 0; block < 2; ++block) {
    x = g.Relu6(g.Conv(x, 16, 16, 3, 1, /*group=*/16));
    x = g.Relu6(g.Conv(x, 16, 16, 1, 1));
  }
  x = g.Relu6(g.Conv(x, 16, 16, 3, 2, /*group=*/16));
  x = g.Relu6(g.Conv(x, 16, 32, 1, 1));
  std::string out = g.Dense(g.Flatten(g.GlobalAveragePool(x)), 32, 10);
  g.Output(out, 10);
  return m;
}

onnx::ModelProto WithElemType(onnx::ModelProto model, int32_t elem_type) {
  size_t bytes = 4;
  switch (elem_type) {
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16: case onnx::TensorProto::INT16: bytes = 2; break;
    case onnx::TensorProto::DOUBLE: case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64: bytes = 8; break;
    case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL: bytes = 1; break;
    default: break;
  }
  auto* graph = model.mutable_graph();
  for (auto& t : *graph->mutable_initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT) continue;
    const size_t n = static_cast<size_t>(t.float_data_size());
    t.clear_float_data();
    t.set_data_type(elem_type);
    t.set_raw_data(std::string(n * bytes, '\0'));  // zeros in every type
  }
  for (auto* list : {graph->mutable_input(), graph->mutable_output()}) {
    for (auto& vi : *list) {
      auto* tt = vi.mutable_type()->mutable_tensor_type();
      if (tt->elem_type() == onnx::TensorProto::FLOAT) tt->set_elem_type(elem_type);
    }
  }
  graph->clear_value_info();
  return model;
}

Status WriteOnnxModel(const onnx::ModelProto& model, const std::string& path) {
  errno = 0;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  // The reason, when the system gave one (a folder that does not exist, a file that may not be written).
  auto failed = [&path] {
    const std::string why = errno != 0 ? std::string(": ") + std::strerror(errno) : std::string();
    return Status::IOError(path + ": cannot write the model" + why);
  };
  if (!f || !model.SerializeToOstream(&f)) return failed();
  f.close();
  if (!f) return failed();
  return Status::OK();
}

}  // namespace tunefleet

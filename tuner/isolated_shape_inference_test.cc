#include "tuner/isolated_shape_inference.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/onnx_import.h"

namespace tunefleet {
namespace {

// A model of one node: float inputs of the given shapes (the second an initializer when `weight`), one output.
onnx::ModelProto OneNode(const std::string& op, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                         int opset = 13) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(opset);
  onnx::GraphProto* g = model.mutable_graph();
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : x) tt->mutable_shape()->add_dim()->set_dim_value(d);
  onnx::NodeProto* node = g->add_node();
  node->set_name("n0");
  node->set_op_type(op);
  node->add_input("x");
  if (!w.empty()) {
    auto* t = g->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : w) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(0.5f);
    node->add_input("w");
  }
  node->add_output("y");
  g->add_output()->set_name("y");
  return model;
}

// libonnx's shape inference trusts the model: a Conv of a rank-2 input and a rank-4 weight (a Flatten before a
// Conv) killed `tunefleet tasks` with SIGSEGV, a DepthToSpace of blocksize 2^62 with SIGFPE, before any line.
TEST(IsolatedShapeInferenceTest, GivenModelsThatCrashOnnxsInferenceTheImportShouldSaySoInOneLine) {
  onnx::ModelProto conv = OneNode("Conv", {1, 256}, {4, 4, 3, 3});
  auto m = ImportOnnxModel(conv, "conv.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(m.status().message().rfind("conv.onnx: shape inference failed: ONNX's shape inference crashed on this "
                                       "model (SIGSEGV)",
                                       0),
            0u)
      << m.status().message();

  onnx::ModelProto d2s = OneNode("DepthToSpace", {1, 8, 2, 2}, {});
  auto* blocksize = d2s.mutable_graph()->mutable_node(0)->add_attribute();
  blocksize->set_name("blocksize");
  blocksize->set_type(onnx::AttributeProto::INT);
  blocksize->set_i(int64_t{1} << 62);
  auto d = ImportOnnxModel(d2s, "d2s.onnx", {});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("crashed on this model (SIGFPE)"), std::string::npos) << d.status().message();
}

// What inference says of a model it refuses comes back from the child as it was; what it infers comes back into
// the caller's model, whose nodes stay the objects they were.
TEST(IsolatedShapeInferenceTest, GivenAModelItShouldInferItsShapesInPlaceOrSayWhyNot) {
  onnx::ModelProto relu = OneNode("Relu", {2, 3}, {});
  const onnx::NodeProto* node = &relu.graph().node(0);
  ASSERT_TRUE(InferShapesIsolated(relu).ok());
  EXPECT_EQ(&relu.graph().node(0), node);
  ASSERT_EQ(relu.graph().output(0).type().tensor_type().shape().dim_size(), 2);
  EXPECT_EQ(relu.graph().output(0).type().tensor_type().shape().dim(1).dim_value(), 3);

  onnx::ModelProto matmul = OneNode("MatMul", {2, 3}, {4, 5});  // inner sizes 3 and 4 disagree
  Status st = InferShapesIsolated(matmul);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("shape inference failed: [ShapeInferenceError]", 0), 0u) << st.message();
  EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
}

}  // namespace
}  // namespace tunefleet

// The tunable operators inside control-flow subgraphs (If's branches, Loop's and Scan's bodies): extracted as the
// main graph's are, with the shapes shape inference found there and the outer scopes' weights, fused only within
// one graph. The models are real ModelProtos, valid for onnx::checker.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "tuner/onnx_import.h"

namespace tunefleet {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kBool = onnx::TensorProto::BOOL;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;

// A tensor type: dims of -1 are unknown (no value, no name); no dims at all (nullopt) is an unknown rank.
void SetType(onnx::ValueInfoProto* vi, int32_t elem, const std::optional<std::vector<int64_t>>& dims) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  if (!dims) return;
  auto* shape = tt->mutable_shape();
  for (int64_t d : *dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

// Builds one graph of a model, the main graph or a subgraph, value by value.
struct Graph {
  onnx::GraphProto* g;

  void Input(const std::string& name, int32_t elem, const std::optional<std::vector<int64_t>>& dims) {
    auto* in = g->add_input();
    in->set_name(name);
    SetType(in, elem, dims);
  }
  void Output(const std::string& name, int32_t elem, const std::optional<std::vector<int64_t>>& dims = std::nullopt) {
    auto* out = g->add_output();
    out->set_name(name);
    SetType(out, elem, dims);
  }
  void Weight(const std::string& name, const std::vector<int64_t>& dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(kFloat);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(0.25f);
  }
  void Int64(const std::string& name, int64_t v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(kInt64);
    t->add_int64_data(v);
  }
  void Bool(const std::string& name, bool v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(kBool);
    t->add_int32_data(v ? 1 : 0);
  }
  onnx::NodeProto* Node(const std::string& op, const std::string& name, const std::vector<std::string>& in,
                        const std::vector<std::string>& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return n;
  }
  // A graph attribute of `node` (an If branch, a Loop or Scan body), to be filled.
  static Graph Sub(onnx::NodeProto* node, const std::string& attr) {
    auto* a = node->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(node->name() + "." + attr);
    return Graph{a->mutable_g()};
  }
};

void SetInts(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

struct Model {
  onnx::ModelProto model;

  Graph main() { return Graph{model.mutable_graph()}; }  // not a member: a copied Model would point into the old one
  Model() {
    model.set_ir_version(7);
    model.add_opset_import()->set_version(13);
    model.mutable_graph()->set_name("main");
  }
};

// x[1,3,8,8] -> If(c) { then: Conv 3->4 3x3 p1 (+ Relu when `relu`); else: Conv 3->8 1x1 } -> y
Model IfOfTwoConvs(bool relu) {
  Model m;
  m.main().Input("x", kFloat, std::vector<int64_t>{1, 3, 8, 8});
  m.main().Input("c", kBool, std::vector<int64_t>{});
  m.main().Weight("w3", {4, 3, 3, 3});
  m.main().Weight("b3", {4});
  m.main().Weight("w1", {8, 3, 1, 1});
  auto* branch = m.main().Node("If", "branch", {"c"}, {"y"});
  Graph then_g = Graph::Sub(branch, "then_branch");
  SetInts(then_g.Node("Conv", "conv3", {"x", "w3", "b3"}, {relu ? "t0" : "t"}), "pads", {1, 1, 1, 1});
  if (relu) then_g.Node("Relu", "relu3", {"t0"}, {"t"});
  then_g.Output("t", kFloat);
  Graph else_g = Graph::Sub(branch, "else_branch");
  else_g.Node("Conv", "conv1", {"x", "w1"}, {"e"});
  else_g.Output("e", kFloat);
  m.main().Output("y", kFloat, std::vector<int64_t>{1, -1, 8, 8});
  return m;
}

// h0[2,8] -> Loop(3 times) { body(i, cond, hi): MatMul(hi, W[8,8] of the main graph) + Add(b[8], main graph) } -> h
// With `nested_if`, the body's MatMul is the then-branch of an If on the loop's condition (else: Relu(h)). With
// `unknown_carry`, the loop-carried value is declared with unknown dims in the body.
Model LoopOfMatMul(bool nested_if, bool unknown_carry) {
  Model m;
  m.main().Input("h0", kFloat, std::vector<int64_t>{2, 8});
  m.main().Weight("W", {8, 8});
  m.main().Weight("b", {8});
  m.main().Int64("trips", 3);
  m.main().Bool("go", true);
  auto* loop = m.main().Node("Loop", "loop", {"trips", "go", "h0"}, {"h"});
  Graph body = Graph::Sub(loop, "body");
  body.Input("i", kInt64, std::vector<int64_t>{});
  body.Input("cond", kBool, std::vector<int64_t>{});
  body.Input("hi", kFloat, unknown_carry ? std::vector<int64_t>{-1, -1} : std::vector<int64_t>{2, 8});
  body.Node("Identity", "keep", {"cond"}, {"cond_out"});
  Graph mm = body;
  if (nested_if) {
    auto* inner = body.Node("If", "inner", {"cond"}, {"ho"});
    mm = Graph::Sub(inner, "then_branch");
    Graph else_g = Graph::Sub(inner, "else_branch");
    else_g.Node("Relu", "", {"hi"}, {"hr"});
    else_g.Output("hr", kFloat);
  }
  mm.Node("MatMul", "mm", {"hi", "W"}, {"hw"});
  mm.Node("Add", "bias", {"hw", "b"}, nested_if ? std::vector<std::string>{"hb"} : std::vector<std::string>{"ho"});
  if (nested_if) mm.Output("hb", kFloat);
  body.Output("cond_out", kBool, std::vector<int64_t>{});
  body.Output("ho", kFloat);
  m.main().Output("h", kFloat, std::vector<int64_t>{-1, -1});
  return m;
}

// How many nodes are counted as not tuned under `label` (0 when none).
int64_t NotTuned(const ImportedModel& m, const std::string& label) {
  auto it = m.not_tuned.find(label);
  return it == m.not_tuned.end() ? 0 : it->second;
}

std::vector<std::string> Specs(const ImportedModel& m) {
  std::vector<std::string> out;
  for (const auto& op : m.ops) out.push_back(op.task.ToSpec());
  return out;
}

TEST(OnnxSubgraphTest, GivenTheSubgraphModels_WeShouldFindThemValidForTheOnnxChecker) {
  EXPECT_NO_THROW(onnx::checker::check_model(IfOfTwoConvs(false).model));
  EXPECT_NO_THROW(onnx::checker::check_model(IfOfTwoConvs(true).model));
  for (bool nested : {false, true}) {
    for (bool unknown : {false, true}) EXPECT_NO_THROW(onnx::checker::check_model(LoopOfMatMul(nested, unknown).model));
  }
}

TEST(OnnxSubgraphTest, GivenAnIfWithAConvInEachBranch_WeShouldExtractBothWithTheirShapes) {
  Model model = IfOfTwoConvs(false);
  auto m = ImportOnnxModel(model.model, "if.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(Specs(*m), (std::vector<std::string>{"conv2d:1,3,8,8,4,3,3,1,1,bias=1:float32",
                                                 "conv2d:1,3,8,8,8,1,1,1,0:float32"}));
  ASSERT_EQ(m->ops.size(), 2u);
  EXPECT_EQ(m->ops[0].node, "branch/then_branch/conv3");
  EXPECT_EQ(m->ops[1].node, "branch/else_branch/conv1");
  EXPECT_EQ(m->ops[0].workload["output"], (std::vector<int64_t>{1, 4, 8, 8}));
  EXPECT_TRUE(m->not_tuned.empty()) << "the If's work is its branches'";
}

TEST(OnnxSubgraphTest, GivenAConvAndReluInABranch_WeShouldFuseThemAsInTheMainGraph) {
  Model model = IfOfTwoConvs(true);
  auto m = ImportOnnxModel(model.model, "if.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->ops.size(), 2u);
  EXPECT_EQ(m->ops[0].onnx_ops, "Conv+Relu");
  EXPECT_EQ(m->ops[0].activation, Activation::kRelu);
  EXPECT_EQ(m->not_tuned.count("Relu"), 0u);
}

// A main-graph Conv whose output a Relu reads, and a branch too: the branch needs the Conv's own output, so the Relu
// is no epilogue of the Conv's kernel.
TEST(OnnxSubgraphTest, GivenAConvOutputThatASubgraphAlsoReads_WeShouldNotFuseTheReluAcrossTheBoundary) {
  Model m;
  m.main().Input("x", kFloat, std::vector<int64_t>{1, 3, 8, 8});
  m.main().Input("c", kBool, std::vector<int64_t>{});
  m.main().Weight("w", {4, 3, 1, 1});
  m.main().Node("Conv", "conv", {"x", "w"}, {"y"});
  m.main().Node("Relu", "relu", {"y"}, {"r"});
  auto* branch = m.main().Node("If", "branch", {"c"}, {"z"});
  Graph then_g = Graph::Sub(branch, "then_branch");
  then_g.Node("Sigmoid", "", {"y"}, {"s"});
  then_g.Output("s", kFloat);
  Graph else_g = Graph::Sub(branch, "else_branch");
  else_g.Node("Identity", "", {"r"}, {"e"});
  else_g.Output("e", kFloat);
  m.main().Output("z", kFloat, std::vector<int64_t>{1, 4, 8, 8});
  ASSERT_NO_THROW(onnx::checker::check_model(m.model));
  auto out = ImportOnnxModel(m.model, "cross.onnx", {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->ops.size(), 1u);
  EXPECT_EQ(out->ops[0].onnx_ops, "Conv");
  EXPECT_EQ(out->ops[0].activation, Activation::kNone);
  EXPECT_EQ(NotTuned(*out, "Relu"), 1);
  EXPECT_EQ(NotTuned(*out, "Sigmoid"), 1);
  EXPECT_EQ(NotTuned(*out, "Identity"), 1);
}

// A MatMul whose sole reader is a custom domain's "Add" of no inputs, with a subgraph that reads the MatMul: taken
// as the dense layer's bias, its missing inputs were read (protobuf's CHECK failed: two lines, exit 1).
TEST(OnnxSubgraphTest, GivenAMatMulReadOnlyByACustomAddOfNoInputs_WeShouldNotFuseIt) {
  Model m;
  m.model.add_opset_import()->set_domain("custom");
  m.model.mutable_opset_import(1)->set_version(1);
  m.main().Input("x", kFloat, std::vector<int64_t>{4, 8});
  m.main().Weight("w", {8, 16});
  m.main().Node("MatMul", "mm", {"x", "w"}, {"y"});
  auto* add = m.main().Node("Add", "custom_add", {}, {"z"});
  add->set_domain("custom");
  Graph body = Graph::Sub(add, "body");
  body.Node("Identity", "", {"y"}, {"e"});
  body.Output("e", kFloat);
  m.main().Output("z", kFloat);
  auto out = ImportOnnxModel(m.model, "custom.onnx", {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->ops.size(), 1u);
  EXPECT_EQ(out->ops[0].onnx_ops, "MatMul");
  EXPECT_EQ(out->ops[0].task.ToSpec(), "gemm:4,16,8:float32");
}

TEST(OnnxSubgraphTest, GivenALoopBodyMatMulOfAnOuterWeight_WeShouldExtractItOnceWithTheRightShape) {
  Model model = LoopOfMatMul(/*nested_if=*/false, /*unknown_carry=*/false);
  auto m = ImportOnnxModel(model.model, "loop.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // Once, not once per iteration: the trip count is data.
  EXPECT_EQ(Specs(*m), (std::vector<std::string>{"gemm:2,8,8,bias=1:float32"}));
  EXPECT_EQ(m->ops[0].onnx_ops, "MatMul+Add");  // the outer-scope bias is a constant of the body's view
  EXPECT_EQ(m->ops[0].node, "loop/body/mm");
  EXPECT_EQ(m->not_tuned, (std::map<std::string, int64_t>{{"Identity", 1}}));
}

TEST(OnnxSubgraphTest, GivenAnIfNestedInALoopBody_WeShouldExtractTheInnerBranchOpWithShapesOfBothScopes) {
  Model model = LoopOfMatMul(/*nested_if=*/true, /*unknown_carry=*/false);
  auto m = ImportOnnxModel(model.model, "nested.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(Specs(*m), (std::vector<std::string>{"gemm:2,8,8,bias=1:float32"}));
  EXPECT_EQ(m->ops[0].node, "loop/body/inner/then_branch/mm");
  EXPECT_EQ(m->not_tuned, (std::map<std::string, int64_t>{{"Identity", 1}, {"Relu", 1}}));
}

TEST(OnnxSubgraphTest, GivenALoopCarriedValueOfUnknownDims_WeShouldListTheBodyMatMulAsNotTuned) {
  for (bool nested : {false, true}) {
    Model model = LoopOfMatMul(nested, /*unknown_carry=*/true);
    model.main().Node("MatMul", "top", {"h0", "W"}, {"top_out"});  // one tunable op, so that the model imports
    model.main().Output("top_out", kFloat, std::vector<int64_t>{2, 8});
    auto m = ImportOnnxModel(model.model, "carry.onnx", {});
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(Specs(*m), (std::vector<std::string>{"gemm:2,8,8:float32"})) << nested;
    EXPECT_EQ(NotTuned(*m, "MatMul (shape unknown)"), 1) << nested;
    EXPECT_EQ(NotTuned(*m, "Add"), 1) << nested;  // not fused into a MatMul that is not tuned
  }
}

// A body input named as an outer tensor is the body's own (ONNX's checker refuses such a model, shape inference does
// not): of no known shape, it must not take the outer tensor's.
TEST(OnnxSubgraphTest, GivenABodyInputThatShadowsAnOuterTensor_WeShouldNotTakeTheOuterShapeForIt) {
  Model model = LoopOfMatMul(/*nested_if=*/false, /*unknown_carry=*/false);
  model.main().Node("MatMul", "top", {"h0", "W"}, {"top_out"});
  model.main().Output("top_out", kFloat, std::vector<int64_t>{2, 8});
  onnx::GraphProto* body = model.model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  ASSERT_EQ(body->input(2).name(), "hi");
  body->mutable_input(2)->set_name("h0");
  body->mutable_input(2)->mutable_type()->mutable_tensor_type()->clear_shape();
  body->mutable_node(1)->set_input(0, "h0");
  ASSERT_EQ(body->node(1).op_type(), "MatMul");
  auto m = ImportOnnxModel(model.model, "shadow.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(Specs(*m), (std::vector<std::string>{"gemm:2,8,8:float32"}));  // the main graph's
  EXPECT_EQ(NotTuned(*m, "MatMul (shape unknown)"), 1);
}

// x[2,5,8] -> Scan over axis 0 { body(s[5,8]): MatMul(s, W[8,4] of the main graph) } -> ys[2,5,4]
TEST(OnnxSubgraphTest, GivenAScanBodyMatMul_WeShouldExtractItAtTheShapeOfOneSlice) {
  Model m;
  m.main().Input("x", kFloat, std::vector<int64_t>{2, 5, 8});
  m.main().Weight("W", {8, 4});
  auto* scan = m.main().Node("Scan", "scan", {"x"}, {"ys"});
  auto* n = scan->add_attribute();
  n->set_name("num_scan_inputs");
  n->set_type(onnx::AttributeProto::INT);
  n->set_i(1);
  Graph body = Graph::Sub(scan, "body");
  body.Input("s", kFloat, std::vector<int64_t>{-1, -1});
  body.Node("MatMul", "mm", {"s", "W"}, {"y"});
  body.Output("y", kFloat);
  m.main().Output("ys", kFloat, std::vector<int64_t>{2, 5, 4});
  ASSERT_NO_THROW(onnx::checker::check_model(m.model));
  auto out = ImportOnnxModel(m.model, "scan.onnx", {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Specs(*out), (std::vector<std::string>{"gemm:5,4,8:float32"}));
  EXPECT_TRUE(out->not_tuned.empty());
}

// A contradiction inside a branch refuses the model as in the main graph, naming the node with its place.
TEST(OnnxSubgraphTest, GivenABranchConvWhoseBiasContradictsItsWeight_WeShouldRefuseTheModelNamingTheNode) {
  Model model = IfOfTwoConvs(false);
  for (auto& t : *model.model.mutable_graph()->mutable_initializer()) {
    if (t.name() != "b3") continue;
    t.clear_dims();
    t.add_dims(5);
    t.add_float_data(0.25f);
  }
  auto m = ImportOnnxModel(model.model, "bad.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "bad.onnx: node 'branch/then_branch/conv3' (Conv): the bias [5] is not one value "
                                  "per output channel ([4])");
}

// Shape inference divides by a subgraph's strides as by the main graph's: a stride of 0 there died of SIGFPE.
TEST(OnnxSubgraphTest, GivenAStrideOfZeroInABranch_WeShouldRefuseTheModelRatherThanDivideByIt) {
  Model model = IfOfTwoConvs(false);
  SetInts(model.model.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g()->mutable_node(0), "strides",
          {0, 0});
  auto m = ImportOnnxModel(model.model, "stride0.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "stride0.onnx: node 'branch/else_branch/conv1' (Conv): strides 0 (each must be 1 or more)");
}

// A value assigned twice inside a branch, or a branch node writing a value of the graph around it: no valid model
// (the ONNX checker refuses both); the first was tuned as one more layer.
TEST(OnnxSubgraphTest, GivenABranchNodeWritingAValueAssignedAlready_WeShouldRefuseTheModelNamingBoth) {
  Model twice = IfOfTwoConvs(false);
  onnx::GraphProto* then_g = twice.model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  ASSERT_EQ(then_g->node(0).name(), "conv3");
  onnx::NodeProto copy = then_g->node(0);
  copy.set_name("conv3b");
  *then_g->add_node() = copy;
  auto m = ImportOnnxModel(twice.model, "if.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "if.onnx: node 'branch/then_branch/conv3b' (Conv) writes 't', which node 'branch/then_branch/conv3' (Conv) "
            "assigns already (an ONNX graph assigns each value once)");
  Model outer = IfOfTwoConvs(false);
  outer.model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_output(0, "x");
  auto o = ImportOnnxModel(outer.model, "if.onnx", {});
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("node 'branch/then_branch/conv3' (Conv) writes 'x', which a graph input"),
            std::string::npos)
      << o.status().message();
}

TEST(OnnxSubgraphTest, GivenNoTunableOperator_TheMessageShouldCountTheSubgraphsNodes) {
  Model m;
  m.main().Input("x", kFloat, std::vector<int64_t>{2, 8});
  m.main().Input("c", kBool, std::vector<int64_t>{});
  auto* branch = m.main().Node("If", "branch", {"c"}, {"y"});
  Graph then_g = Graph::Sub(branch, "then_branch");
  then_g.Node("Relu", "", {"x"}, {"t"});
  then_g.Output("t", kFloat);
  Graph else_g = Graph::Sub(branch, "else_branch");
  else_g.Node("Sigmoid", "", {"x"}, {"e0"});
  else_g.Node("Neg", "", {"e0"}, {"e"});
  else_g.Output("e", kFloat);
  m.main().Output("y", kFloat, std::vector<int64_t>{2, 8});
  auto out = ImportOnnxModel(m.model, "none.onnx", {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "none.onnx: no tunable operator (Conv, Gemm, MatMul, MaxPool, AveragePool, GlobalAveragePool) among 4 "
            "nodes (3 of them in subgraphs): Neg x1, Relu x1, Sigmoid x1");
}

// An --input-shape makes the shapes recorded in the file stale, in the subgraphs as in the main graph: shape
// inference recomputes them there too rather than refuse the model over its own old record.
TEST(OnnxSubgraphTest, GivenAnInputShapeOverAModelWithRecordedBranchShapes_WeShouldUseTheNewShapeInTheBranches) {
  Model model = IfOfTwoConvs(false);
  auto* dim0 = model.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
                   ->mutable_shape()->mutable_dim(0);
  dim0->set_dim_param("batch");
  ImportOptions one;
  one.input_shapes["x"] = {1, 3, 8, 8};
  auto first = ImportOnnxModel(model.model, "dyn.onnx", one);  // records the branches' shapes at batch 1
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ImportOptions four;
  four.input_shapes["x"] = {4, 3, 8, 8};
  auto m = ImportOnnxModel(model.model, "dyn.onnx", four);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(Specs(*m), (std::vector<std::string>{"conv2d:4,3,8,8,4,3,3,1,1,bias=1:float32",
                                                 "conv2d:4,3,8,8,8,1,1,1,0:float32"}));
}

// A Loop body's declared carried shape was the model's, for its old input shape: shape inference does not carry the
// new one into the body, so the body's MatMul is not tuned rather than tuned at the old shape.
TEST(OnnxSubgraphTest, GivenAnInputShapeOverALoop_WeShouldNotTuneTheBodyAtItsDeclaredOldShape) {
  Model model = LoopOfMatMul(/*nested_if=*/false, /*unknown_carry=*/false);
  model.main().Node("MatMul", "top", {"h0", "W"}, {"top_out"});
  model.main().Output("top_out", kFloat, std::vector<int64_t>{-1, 8});
  model.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()
      ->mutable_dim(0)->set_dim_param("batch");
  ImportOptions options;
  options.input_shapes["h0"] = {4, 8};
  auto m = ImportOnnxModel(model.model, "loop.onnx", options);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(Specs(*m), (std::vector<std::string>{"gemm:4,8,8:float32"}));  // the main graph's, not gemm:2,8,8
  EXPECT_EQ(NotTuned(*m, "MatMul (shape unknown)"), 1);
}

}  // namespace
}  // namespace tunefleet

#include "tuner/onnx_import.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <onnx/checker.h>

#include "tuner/test_models.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

class OnnxImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/onnx_import_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string WriteModel(const std::string& name, const onnx::ModelProto& m) {
    std::string path = (dir_ / name).string();
    EXPECT_TRUE(WriteOnnxModel(m, path).ok());
    return path;
  }
  static std::vector<std::string> Specs(const ImportedModel& m) {
    std::vector<std::string> out;
    for (const auto& op : m.ops) out.push_back(op.task.ToSpec());
    return out;
  }

  fs::path dir_;
};

TEST_F(OnnxImportTest, GivenTheGeneratedModels_WeShouldFindThemValidForTheOnnxChecker) {
  EXPECT_NO_THROW(onnx::checker::check_model(MakeResNetLikeModel()));
  EXPECT_NO_THROW(onnx::checker::check_model(MakeMobileNetLikeModel()));
}

TEST_F(OnnxImportTest, GivenTheResNetLikeFile_WeShouldFindItsConvsPoolAndDenseInGraphOrder) {
  auto m = ImportOnnxFile(WriteModel("resnet.onnx", MakeResNetLikeModel()), {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->ops.size(), 10u);
  EXPECT_EQ(m->opset, 13);
  EXPECT_EQ(m->ops[0].task.ToSpec(), "conv2d:1,3,32,32,16,3,3,1,1,bias=1:float32");
  EXPECT_EQ(m->ops[0].onnx_ops, "Conv+Relu");
  EXPECT_EQ(m->ops[0].activation, Activation::kRelu);
  EXPECT_EQ(m->ops[2].onnx_ops, "Conv");  // the block's second conv feeds the residual Add, not a Relu
  EXPECT_EQ(m->ops[5].task.ToSpec(), "conv2d:1,16,32,32,32,3,3,2,1,bias=1:float32");
  EXPECT_EQ(m->ops[7].task.ToSpec(), "conv2d:1,16,32,32,32,1,1,2,0,bias=1:float32");
  EXPECT_EQ(m->ops[8].task.op, "pool");
  EXPECT_EQ(m->ops[8].task.Get("global"), 1);
  EXPECT_EQ(m->ops[8].task.Get("H"), 16);
  EXPECT_EQ(m->ops[9].task.ToSpec(), "gemm:1,10,32,transb=1,bias=1:float32");
  EXPECT_EQ(m->not_tuned.at("Add"), 3);
  EXPECT_EQ(m->not_tuned.at("Relu"), 3);  // the Relus after the Adds
  EXPECT_EQ(m->not_tuned.at("Flatten"), 1);
}

TEST_F(OnnxImportTest, GivenTheMobileNetLikeModel_WeShouldFindDepthwiseConvsWithReLU6Fused) {
  onnx::ModelProto model = MakeMobileNetLikeModel();
  auto m = ImportOnnxModel(model, "mobilenet", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->ops.size(), 9u);
  EXPECT_EQ(m->ops[1].task.ToSpec(), "dwconv2d:1,16,16,16,3,3,1,1,bias=1:float32");
  EXPECT_EQ(m->ops[1].onnx_ops, "Conv+Clip");
  EXPECT_EQ(m->ops[1].activation, Activation::kRelu6);
  EXPECT_EQ(m->ops[5].task.ToSpec(), "dwconv2d:1,16,16,16,3,3,2,1,bias=1:float32");
  EXPECT_EQ(m->ops[6].task.ToSpec(), "conv2d:1,16,8,8,32,1,1,1,0,bias=1:float32");
  EXPECT_EQ(m->not_tuned.count("Clip"), 0u);
}

// A Clip bound whose dims claim 2^62 elements (raw data empty): its element count in bytes wrapped to 0, which
// "matched" the empty data, and a vector of 2^62 floats threw ("internal error"). The bound is unknown: the Clip
// is not fused.
TEST_F(OnnxImportTest, GivenAClipBoundWithAHugeShape_WeShouldLeaveTheClipUnfusedRatherThanAllocateIt) {
  onnx::ModelProto model = MakeMobileNetLikeModel();
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.name() != "clip.min") continue;
    t.clear_dims();
    t.add_dims(int64_t{1} << 62);
    t.clear_float_data();
    t.set_raw_data("");
  }
  model.mutable_graph()->clear_value_info();
  auto m = ImportOnnxModel(model, "mobilenet", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->ops[1].onnx_ops, "Conv");
  EXPECT_GT(m->not_tuned.count("Clip"), 0u);
}

// A 3x3 kernel over a 1x1 input without padding: `tasks` listed the task (output [1,4,-1,-1]) that `tune` refused.
TEST_F(OnnxImportTest, GivenAKernelLargerThanThePaddedInput_WeShouldRefuseTheModelNamingTheNode) {
  onnx::ModelProto model = MakeResNetLikeModel();
  auto* conv = model.mutable_graph()->mutable_node(0);
  for (auto& a : *conv->mutable_attribute()) {
    if (a.name() == "pads") {
      a.clear_ints();
      for (int i = 0; i < 4; ++i) a.add_ints(0);
    }
  }
  for (auto& input : *model.mutable_graph()->mutable_input()) {
    auto* dims = input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
    if (dims->size() != 4) continue;
    (*dims)[2].set_dim_value(1);
    (*dims)[3].set_dim_value(1);
  }
  model.mutable_graph()->clear_value_info();
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto m = ImportOnnxModel(model, "small.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("small.onnx: node '" + conv->name() + "' (Conv): "), std::string::npos)
      << m.status().message();
  EXPECT_NE(m.status().message().find("the kernel is larger than the padded input"), std::string::npos)
      << m.status().message();
}

TEST_F(OnnxImportTest, GivenAFileThatIsNotOnnx_WeShouldSaySoNamingTheFile) {
  std::string path = Write("notes.onnx", "this is a text file, not a model\n");
  auto m = ImportOnnxFile(path, {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message().rfind(path + ": not an ONNX model", 0), 0u) << m.status().message();
}

TEST_F(OnnxImportTest, GivenATruncatedFile_WeShouldSayTruncated) {
  std::string bytes;
  ASSERT_TRUE(MakeResNetLikeModel().SerializeToString(&bytes));
  std::string path = Write("cut.onnx", bytes.substr(0, bytes.size() / 2));
  auto m = ImportOnnxFile(path, {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(path + ": truncated"), std::string::npos) << m.status().message();
}

// A model nested past protobuf's recursion limit (100) is whole, not truncated: it was called truncated. Each If
// nests three messages (its node, the attribute, the branch's graph).
TEST_F(OnnxImportTest, GivenAModelNestedPastProtobufsLimit_WeShouldSayNestedNotTruncated) {
  onnx::ModelProto model = MakeResNetLikeModel();
  onnx::GraphProto* graph = model.mutable_graph();
  for (int depth = 0; depth < 40; ++depth) {
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("If");
    onnx::AttributeProto* branch = node->add_attribute();
    branch->set_name("then_branch");
    branch->set_type(onnx::AttributeProto::GRAPH);
    graph = branch->mutable_g();
  }
  auto m = ImportOnnxFile(WriteModel("deep.onnx", model), {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("deep.onnx: the ONNX model nests messages (subgraphs) more than 100 levels deep"),
            std::string::npos)
      << m.status().message();
}

TEST_F(OnnxImportTest, GivenAMissingFile_WeShouldSayItCannotBeOpened) {
  auto m = ImportOnnxFile((dir_ / "absent.onnx").string(), {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("absent.onnx: cannot open"), std::string::npos);
}

TEST_F(OnnxImportTest, GivenAnOpsetNewerThanTheLibraryKnows_WeShouldNameTheOpset) {
  onnx::ModelProto model = MakeResNetLikeModel();
  model.mutable_opset_import(0)->set_version(99);
  auto m = ImportOnnxFile(WriteModel("future.onnx", model), {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("future.onnx: opset 99 of domain 'ai.onnx' is unknown"), std::string::npos)
      << m.status().message();
}

TEST_F(OnnxImportTest, GivenADynamicBatch_WeShouldAskForInputShapeAndUseItWhenGiven) {
  onnx::ModelProto model = MakeResNetLikeModel();
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_dim_param("batch");
  onnx::ModelProto copy = model;
  auto m = ImportOnnxModel(model, "dyn.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "dyn.onnx: input 'data' has dynamic dims [batch,3,32,32]; give them with --input-shape "
            "data:1x3x32x32 (for example)");

  ImportOptions options;
  options.input_shapes["data"] = {4, 3, 32, 32};
  auto ok = ImportOnnxModel(copy, "dyn.onnx", options);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->ops[0].task.Get("N"), 4);
  EXPECT_EQ(ok->ops[9].task.Get("M"), 4);
}

TEST_F(OnnxImportTest, GivenANegativeInputDim_WeShouldSayTheDimIsWrongNotDynamic) {
  onnx::ModelProto model = MakeResNetLikeModel();
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)
      ->set_dim_value(-3);
  auto m = ImportOnnxModel(model, "neg.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "neg.onnx: input 'data' has a dim of -3 in [1,-3,32,32] (dims are 1 or more); give its shape with "
            "--input-shape data:1x3x224x224 (for example)");
}

TEST_F(OnnxImportTest, GivenAnInputShapeForAnUnknownInput_WeShouldListTheRealInputs) {
  onnx::ModelProto model = MakeResNetLikeModel();
  // Also where the real input is dynamic: that said its dims were missing, as if no --input-shape had been given.
  onnx::ModelProto dynamic = model;
  dynamic.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_dim_param("N");
  for (onnx::ModelProto* each : {&model, &dynamic}) {
    ImportOptions options;
    options.input_shapes["image"] = {1, 3, 32, 32};
    auto m = ImportOnnxModel(*each, "r.onnx", options);
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.status().message().find("'image', which is not a graph input (inputs: data)"), std::string::npos)
        << m.status().message();
  }
}

// The ResNet-like model's input feeding one node of `op_type` whose output, of no known shape, is the graph's.
onnx::ModelProto OneNodeModel(const std::string& op_type) {
  onnx::ModelProto model = MakeResNetLikeModel();
  auto* graph = model.mutable_graph();
  graph->clear_node();
  graph->clear_initializer();
  auto* node = graph->add_node();
  node->set_op_type(op_type);
  node->add_input("data");
  node->add_output("y");
  graph->mutable_output(0)->set_name("y");
  graph->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  return model;
}

TEST_F(OnnxImportTest, GivenAModelWithoutTunableOperators_WeShouldSaySoAndListWhatItHas) {
  onnx::ModelProto model = OneNodeModel("Relu");
  auto m = ImportOnnxFile(WriteModel("relu.onnx", model), {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("relu.onnx: no tunable operator"), std::string::npos);
  EXPECT_NE(m.status().message().find("Relu x1"), std::string::npos) << m.status().message();
}

// A misspelt op type (one damaged byte, here with a control character) is named as no ONNX operator, escaped.
TEST_F(OnnxImportTest, GivenAnOpTypeThatIsNoOnnxOperator_TheListShouldSaySoEscaped) {
  onnx::ModelProto model = OneNodeModel("Co\anv");
  auto m = ImportOnnxFile(WriteModel("damaged.onnx", model), {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("Co\\x07nv (not an ONNX operator) x1"), std::string::npos)
      << m.status().message();
}

TEST_F(OnnxImportTest, GivenAsymmetricPads_WeShouldListTheConvAsNotTunedRatherThanGuess) {
  onnx::ModelProto model = MakeResNetLikeModel();
  auto* conv = model.mutable_graph()->mutable_node(0);
  for (auto& a : *conv->mutable_attribute()) {
    if (a.name() == "pads") {
      a.clear_ints();
      for (int64_t p : {0, 0, 2, 2}) a.add_ints(p);
    }
  }
  auto m = ImportOnnxModel(model, "pads.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->ops.size(), 9u);
  EXPECT_EQ(m->not_tuned.at("Conv (asymmetric pads)"), 1);
}

// Shape inference takes a Conv's output channels from its weight and checks nothing else of it, so a model whose
// weights contradict its inputs would be tuned as the inputs say; it is refused, naming the node.
TEST_F(OnnxImportTest, GivenAConvWeightOrBiasThatContradictsItsInput_WeShouldRefuseTheModelNamingTheNode) {
  auto with_dims = [](const std::string& suffix, const std::vector<int64_t>& dims) {
    onnx::ModelProto model = MakeResNetLikeModel();
    const std::string conv = model.graph().node(0).name();
    for (auto& t : *model.mutable_graph()->mutable_initializer()) {
      if (t.name() != conv + suffix) continue;
      t.clear_dims();
      for (int64_t d : dims) t.add_dims(d);
    }
    return std::make_pair(model, conv);
  };
  auto [channels, conv] = with_dims(".w", {16, 4, 3, 3});
  auto m = ImportOnnxModel(channels, "bad.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "bad.onnx: node '" + conv +
                                      "' (Conv): the weight [16,4,3,3] takes 4 input channel(s) per group x 1 "
                                      "group(s), but the input [1,3,32,32] has 3");

  auto [bias, same] = with_dims(".b", {8});
  m = ImportOnnxModel(bias, "bad.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "bad.onnx: node '" + same + "' (Conv): the bias [8] is not one value per output channel ([16])");
}

TEST_F(OnnxImportTest, GivenAKernelShapeThatDisagreesWithTheWeight_WeShouldRefuseTheModelNamingTheNode) {
  onnx::ModelProto model = MakeResNetLikeModel();
  auto* conv = model.mutable_graph()->mutable_node(0);
  conv->mutable_attribute()->erase(
      std::remove_if(conv->mutable_attribute()->begin(), conv->mutable_attribute()->end(),
                     [](const onnx::AttributeProto& a) { return a.name() == "kernel_shape"; }),
      conv->mutable_attribute()->end());
  ASSERT_TRUE(ImportOnnxModel(model, "ok.onnx", {}).ok());  // kernel_shape may be left out
  auto* a = conv->add_attribute();
  a->set_name("kernel_shape");
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t k : {5, 5}) a->add_ints(k);
  model.mutable_graph()->clear_value_info();  // shape inference would then follow kernel_shape, not the weight
  auto m = ImportOnnxModel(model, "bad.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "bad.onnx: node '" + conv->name() +
                                      "' (Conv): kernel_shape [5,5] disagrees with the weight [16,3,3,3] (3x3)");
}

TEST_F(OnnxImportTest, GivenADirectoryOrADeviceFile_WeShouldRefuseItInOneLineNotReadIt) {
  auto dir = ImportOnnxFile(dir_.string(), {});
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().message(), dir_.string() + ": a directory, not an ONNX model");
  auto zero = ImportOnnxFile("/dev/zero", {});  // endless: read, it would fill the memory
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(), "/dev/zero: not a file, not an ONNX model");
}

TEST_F(OnnxImportTest, GivenAStrideOfZero_WeShouldRefuseTheModelInOneLineRatherThanDivideByIt) {
  onnx::ModelProto model = MakeResNetLikeModel();
  auto* conv = model.mutable_graph()->mutable_node(0);
  bool set = false;
  for (auto& a : *conv->mutable_attribute()) {
    if (a.name() == "strides") {
      a.clear_ints();
      for (int64_t st : {0, 0}) a.add_ints(st);
      set = true;
    }
  }
  if (!set) {
    auto* a = conv->add_attribute();
    a->set_name("strides");
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t st : {0, 0}) a->add_ints(st);
  }
  auto m = ImportOnnxModel(model, "stride0.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(m.status().message().find("stride0.onnx: node '"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("(Conv): strides 0 (each must be 1 or more)"), std::string::npos)
      << m.status().message();
}

// Small ONNX graphs of dense layers, built node by node.
struct DenseGraph {
  onnx::ModelProto model;
  onnx::GraphProto* g = model.mutable_graph();

  DenseGraph() {
    model.set_ir_version(7);
    model.add_opset_import()->set_version(13);
  }
  void Input(const std::string& name, const std::vector<int64_t>& dims) {
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void Weight(const std::string& name, const std::vector<int64_t>& dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(0.5f);
  }
  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& in, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    for (const auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  }
  void Output(const std::string& name) { g->add_output()->set_name(name); }
};

// x[2,8] -> MatMul(W[8,4]) -> Add(b[4]) -> Relu, and a batched MatMul of two activations [3,2,8] x [3,8,4].
onnx::ModelProto DenseModel() {
  DenseGraph d;
  d.Input("x", {2, 8});
  d.Input("p", {3, 2, 8});
  d.Input("q", {3, 8, 4});
  d.Weight("W", {8, 4});
  d.Weight("b", {4});
  d.Node("MatMul", {"x", "W"}, "xw");
  d.Node("Add", {"xw", "b"}, "xwb");
  d.Node("Relu", {"xwb"}, "y");
  d.Node("MatMul", {"p", "q"}, "pq");
  d.Output("y");
  d.Output("pq");
  return d.model;
}

TEST_F(OnnxImportTest, GivenMatMulAddRelu_WeShouldGetOneDenseTaskWithBiasAndTheBatchedMatMulWithBatch) {
  onnx::ModelProto model = DenseModel();
  auto m = ImportOnnxModel(model, "dense", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->ops.size(), 2u);
  EXPECT_EQ(m->ops[0].task.ToSpec(), "gemm:2,4,8,bias=1:float32");
  EXPECT_EQ(m->ops[0].onnx_ops, "MatMul+Add+Relu");
  EXPECT_EQ(m->ops[0].activation, Activation::kRelu);
  EXPECT_EQ(m->ops[1].task.ToSpec(), "gemm:2,4,8,batch=3:float32");
  EXPECT_TRUE(m->not_tuned.empty());
}

// The example shape fits the input: its known dims, each dynamic one 1 (it was 1x3x224x224 whatever the rank).
TEST_F(OnnxImportTest, GivenADynamicInputOfAnotherRank_TheExampleShapeShouldFitIt) {
  DenseGraph d;
  d.Input("a", {0, 16});
  d.g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("S");
  d.Weight("W", {16, 4});
  d.Node("MatMul", {"a", "W"}, "y");
  d.Output("y");
  onnx::ModelProto shapeless = d.model;
  auto m = ImportOnnxModel(d.model, "seq.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "seq.onnx: input 'a' has dynamic dims [S,16]; give them with --input-shape a:1x16 (for example)");
  // An input of no shape at all is asked for too (it was read as a scalar, and shape inference failed on it).
  shapeless.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  onnx::ModelProto given = shapeless;
  auto none = ImportOnnxModel(shapeless, "seq.onnx", {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            "seq.onnx: input 'a' has no shape; give it with --input-shape a:1x3x224x224 (for example)");
  ImportOptions options;
  options.input_shapes["a"] = {5, 16};
  auto ok = ImportOnnxModel(given, "seq.onnx", options);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->ops[0].task.ToSpec(), "gemm:5,4,16:float32");
}

// Two nodes writing one value make no valid ONNX graph: they were tuned as two layers of one workload, exit 0.
TEST_F(OnnxImportTest, GivenTwoNodesWritingOneValue_WeShouldRefuseTheModelNamingThem) {
  DenseGraph d;
  d.Input("x", {2, 16});
  d.Weight("W", {16, 16});
  d.Node("MatMul", {"x", "W"}, "y")->set_name("first");
  d.Node("MatMul", {"x", "W"}, "y")->set_name("second");
  d.Output("y");
  auto m = ImportOnnxModel(d.model, "twice.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "twice.onnx: node 'second' (MatMul) writes 'y', which node 'first' (MatMul) assigns already (an ONNX "
            "graph assigns each value once)");
  DenseGraph input;  // a node writing a graph input's value
  input.Input("x", {2, 16});
  input.Weight("W", {16, 16});
  input.Node("MatMul", {"x", "W"}, "x")->set_name("mm");
  input.Output("x");
  auto over_input = ImportOnnxModel(input.model, "input.onnx", {});
  ASSERT_FALSE(over_input.ok());
  EXPECT_NE(over_input.status().message().find("which a graph input assigns already"), std::string::npos)
      << over_input.status().message();
}

// Leading dims flattened into M (or a batch) past 2^63 wrapped round: 2^62+1 x 4 rows became an M of 4, tuned as
// gemm:4,16,16. The product is held at its limit, and the task's bounds refuse it.
TEST_F(OnnxImportTest, GivenAMatMulWhoseFlattenedRowsPassTheRangeOfItsSizes_WeShouldNotTuneAWrappedShape) {
  DenseGraph d;
  d.Input("a", {(int64_t{1} << 62) + 1, 4, 16});
  d.Input("x", {2, 16});
  d.Weight("W", {16, 16});
  d.Node("MatMul", {"a", "W"}, "y");
  d.Node("MatMul", {"x", "W"}, "z");
  d.Output("y");
  d.Output("z");
  auto m = ImportOnnxModel(d.model, "wrap.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->ops.size(), 1u);
  EXPECT_EQ(m->ops[0].task.ToSpec(), "gemm:2,16,16:float32");
  ASSERT_EQ(m->not_tuned.size(), 1u);
  EXPECT_NE(m->not_tuned.begin()->first.find("MatMul (task rejected: "), std::string::npos)
      << m->not_tuned.begin()->first;
}

// A square layer (M = N = 4) whose added constant holds N values but is not a bias over the N outputs: [4,1] adds
// one value per row. Tuned as a bias, the kernel would compute another function than the model's.
TEST_F(OnnxImportTest, GivenAColumnAddedToASquareGemmOrMatMul_WeShouldNotTakeItForTheBias) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{4, 1}, std::vector<int64_t>{4}, {1, 4}}) {
    DenseGraph d;
    d.Input("x", {4, 4});
    d.Weight("W", {4, 4});
    d.Weight("c", shape);
    d.Node("Gemm", {"x", "W", "c"}, "g");
    d.Node("MatMul", {"x", "W"}, "xw");
    d.Node("Add", {"xw", "c"}, "y");
    d.Output("g");
    d.Output("y");
    auto m = ImportOnnxModel(d.model, "square.onnx", {});
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const bool row = shape.size() == 1 || shape[0] == 1;
    const std::string what = "C " + std::to_string(shape.size()) + "-D, first dim " + std::to_string(shape[0]);
    if (row) {
      ASSERT_EQ(m->ops.size(), 2u) << what;
      EXPECT_EQ(m->ops[0].task.ToSpec(), "gemm:4,4,4,bias=1:float32") << what;
      EXPECT_EQ(m->ops[1].task.ToSpec(), "gemm:4,4,4,bias=1:float32") << what;
      EXPECT_EQ(m->ops[1].onnx_ops, "MatMul+Add") << what;
    } else {
      ASSERT_EQ(m->ops.size(), 1u) << what;  // the Gemm is left untuned, the MatMul tuned without its Add
      EXPECT_EQ(m->ops[0].task.ToSpec(), "gemm:4,4,4:float32") << what;
      EXPECT_EQ(m->ops[0].onnx_ops, "MatMul") << what;
      EXPECT_EQ(m->not_tuned.count("Gemm (C is not a bias row)"), 1u) << what;
      EXPECT_EQ(m->not_tuned.count("Add"), 1u) << what;  // the column Add, not fused
    }
  }
}

void SetAttr(onnx::NodeProto* node, const std::string& name, float v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
void SetAttr(onnx::NodeProto* node, const std::string& name, const std::string& v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
void SetAttr(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void SetAttr(onnx::NodeProto* node, const std::string& name, int64_t v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

// The kernels compute in float or half: an int32 MatMul became `gemm:4,16,8:float32`, a float64 Conv a float32 one.
TEST_F(OnnxImportTest, GivenIntOrFloat64Tensors_WeShouldListTheLayersAsNotTunedNamingTheType) {
  onnx::ModelProto int32s = WithElemType(DenseModel(), onnx::TensorProto::INT32);
  auto ints = ImportOnnxModel(int32s, "int.onnx", {});
  ASSERT_FALSE(ints.ok());
  EXPECT_NE(ints.status().message().find("int.onnx: no tunable operator"), std::string::npos);
  EXPECT_NE(ints.status().message().find("MatMul (int32 tensors) x2"), std::string::npos) << ints.status().message();

  onnx::ModelProto doubles = WithElemType(MakeResNetLikeModel(), onnx::TensorProto::DOUBLE);
  auto m = ImportOnnxModel(doubles, "f64.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("Conv (float64 tensors) x8"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("Gemm (float64 tensors) x1"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("GlobalAveragePool (float64 tensors) x1"), std::string::npos);
}

TEST_F(OnnxImportTest, GivenFloat16Tensors_WeShouldMakeFloat16TasksNotFloat32Ones) {
  onnx::ModelProto half = WithElemType(MakeResNetLikeModel(), onnx::TensorProto::FLOAT16);
  auto m = ImportOnnxModel(half, "f16.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->ops.size(), 10u);
  EXPECT_EQ(m->ops[0].task.ToSpec(), "conv2d:1,3,32,32,16,3,3,1,1,bias=1:float16");
  EXPECT_EQ(m->ops[8].task.ToSpec(), "pool:1,32,16,16,16,16,1,0,mode=avg,global=1:float16");
  EXPECT_EQ(m->ops[9].task.ToSpec(), "gemm:1,10,32,transb=1,bias=1:float16");
  // Tensors of two types in one layer are no task of either.
  onnx::ModelProto mixed = MakeResNetLikeModel();
  for (auto& t : *mixed.mutable_graph()->mutable_initializer()) {
    if (t.name() != "fc.w") continue;
    t.set_raw_data(std::string(static_cast<size_t>(t.float_data_size()) * 2, '\0'));
    t.clear_float_data();
    t.set_data_type(onnx::TensorProto::FLOAT16);
  }
  auto mm = ImportOnnxModel(mixed, "mixed.onnx", {});
  ASSERT_TRUE(mm.ok()) << mm.status().ToString();
  EXPECT_EQ(mm->not_tuned.count("Gemm (mixed float32 and float16 tensors)"), 1u);
}

// ONNX's Gemm computes alpha * A * B + beta * C: with beta 0 the C input is ignored, and the layer has no bias.
TEST_F(OnnxImportTest, GivenAGemmWithBetaZero_WeShouldTuneItWithoutTheBiasAndRefuseOtherBetas) {
  for (float beta : {0.0f, 0.5f}) {
    DenseGraph d;
    d.Input("x", {4, 8});
    d.Weight("W", {8, 16});
    d.Weight("c", {16});
    SetAttr(d.Node("Gemm", {"x", "W", "c"}, "g"), "beta", beta);
    d.Node("MatMul", {"x", "W"}, "y");
    d.Output("g");
    d.Output("y");
    auto m = ImportOnnxModel(d.model, "beta.onnx", {});
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    if (beta == 0.0f) {
      ASSERT_EQ(m->ops.size(), 2u);
      EXPECT_EQ(m->ops[0].task.ToSpec(), "gemm:4,16,8:float32");
      EXPECT_EQ(m->ops[0].workload["bias"], false);
    } else {
      ASSERT_EQ(m->ops.size(), 1u);
      EXPECT_EQ(m->not_tuned.count("Gemm (beta not 0 or 1)"), 1u);
    }
  }
}

// A Relu of another domain computes what that domain says; it is not ONNX's Relu to fuse.
TEST_F(OnnxImportTest, GivenAReluOfACustomDomainAfterAConv_WeShouldNotFuseIt) {
  onnx::ModelProto model = MakeResNetLikeModel();
  auto* opset = model.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  ASSERT_EQ(model.graph().node(1).op_type(), "Relu");
  model.mutable_graph()->mutable_node(1)->set_domain("com.example");
  auto m = ImportOnnxModel(model, "custom.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->ops[0].onnx_ops, "Conv");
  EXPECT_EQ(m->ops[0].activation, Activation::kNone);
  EXPECT_EQ(m->not_tuned.at("com.example.Relu"), 1);
}

TEST_F(OnnxImportTest, GivenAnAutoPadOnnxDoesNotDefine_WeShouldListTheConvAsNotTunedNamingTheValue) {
  onnx::ModelProto model = MakeResNetLikeModel();
  auto* conv = model.mutable_graph()->mutable_node(0);
  conv->mutable_attribute()->erase(
      std::remove_if(conv->mutable_attribute()->begin(), conv->mutable_attribute()->end(),
                     [](const onnx::AttributeProto& a) { return a.name() == "pads"; }),
      conv->mutable_attribute()->end());
  SetAttr(conv, "auto_pad", std::string("SAME"));
  auto m = ImportOnnxModel(model, "autopad.onnx", {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->ops.size(), 9u);
  EXPECT_EQ(m->not_tuned.at("Conv (auto_pad 'SAME' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID)"), 1);
}

// `tasks` listed pools that pool.worksize cannot run (an output of no element, a window over padding alone) and
// only `tune` refused them; they are refused at import, as such convolutions are.
TEST_F(OnnxImportTest, GivenAPoolWindowTheModelCannotRun_WeShouldRefuseTheModelNamingTheNode) {
  struct Case {
    std::vector<int64_t> kernel, pads, strides;
    std::string says;
  };
  for (const Case& c : {Case{{2, 2}, {2, 2, 2, 2}, {1, 1}, "pad 2 is not smaller than the 2x2 window"},
                        Case{{9, 9}, {0, 0, 0, 0}, {1, 1}, "the 9x9 window is larger than the padded input [1,4,8,8]"},
                        Case{{9, 9}, {0, 0, 0, 0}, {2, 2}, "the 9x9 window is larger than the padded input [1,4,8,8]"},
                        Case{{3, 3}, {1, 1, 1, 1}, {2, 2}, ""}}) {
    DenseGraph d;
    d.Input("x", {1, 4, 8, 8});
    auto* pool = d.Node("MaxPool", {"x"}, "y");
    pool->set_name("pool1");
    SetAttr(pool, "kernel_shape", c.kernel);
    SetAttr(pool, "pads", c.pads);
    SetAttr(pool, "strides", c.strides);
    d.Output("y");
    auto m = ImportOnnxModel(d.model, "pool.onnx", {});
    if (c.says.empty()) {
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      EXPECT_EQ(m->ops[0].task.ToSpec(), "pool:1,4,8,8,3,3,2,1:float32");
      continue;
    }
    ASSERT_FALSE(m.ok()) << c.says;
    const std::string tail = c.kernel[0] == 2 ? " (a window over padding alone has no value)" : " (pad 0)";
    EXPECT_EQ(m.status().message(), "pool.onnx: node 'pool1' (MaxPool): " + c.says + tail);
  }
}

// Symmetric on each axis but not the same on both, as a 1x3 convolution's "same" padding: a task states one pad, so
// it is not tuned, but it was called "asymmetric pads", which it is not.
TEST_F(OnnxImportTest, GivenAPadThatDiffersBetweenHAndW_WeShouldSaySoRatherThanAsymmetric) {
  DenseGraph d;
  d.Input("x", {1, 4, 8, 8});
  d.Weight("w", {4, 4, 1, 3});
  auto* conv = d.Node("Conv", {"x", "w"}, "y");
  SetAttr(conv, "pads", std::vector<int64_t>{0, 1, 0, 1});
  d.Node("Relu", {"x"}, "r");  // a layer beside it: the model is not one of no tunable operator
  d.Output("y");
  d.Output("r");
  auto m = ImportOnnxModel(d.model, "pads.onnx", {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("Conv (pad differs between H and W) x1"), std::string::npos)
      << m.status().message();
  EXPECT_EQ(m.status().message().find("asymmetric"), std::string::npos) << m.status().message();
}

// ceil_mode changes a pool only where its windows do not fit the padded input exactly: there it adds a partial last
// window, which pool.worksize does not compute. Where they fit, it is the same pool (torchvision exports such).
TEST_F(OnnxImportTest, GivenCeilModeOnAPoolWhoseWindowsFitTheInput_WeShouldTuneItAndOtherwiseNot) {
  for (const auto& [kernel, tuned] : {std::pair<int64_t, bool>{2, true}, std::pair<int64_t, bool>{3, false}}) {
    DenseGraph d;
    d.Input("x", {1, 4, 8, 8});
    auto* pool = d.Node("MaxPool", {"x"}, "y");
    SetAttr(pool, "kernel_shape", std::vector<int64_t>{kernel, kernel});
    SetAttr(pool, "strides", std::vector<int64_t>{2, 2});
    SetAttr(pool, "ceil_mode", int64_t{1});
    d.Output("y");
    auto m = ImportOnnxModel(d.model, "pool.onnx", {});
    if (tuned) {
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      ASSERT_EQ(m->ops.size(), 1u);
      EXPECT_EQ(m->ops[0].task.ToSpec(), "pool:1,4,8,8,2,2,2,0:float32");
      // Under auto_pad SAME_UPPER the output is ceil(in / stride) with or without ceil_mode: a 1x1 window at stride
      // 2 leaves a remainder, and is the same pool still.
      DenseGraph same;
      same.Input("x", {1, 4, 8, 8});
      auto* one = same.Node("MaxPool", {"x"}, "y");
      SetAttr(one, "kernel_shape", std::vector<int64_t>{1, 1});
      SetAttr(one, "strides", std::vector<int64_t>{2, 2});
      SetAttr(one, "auto_pad", std::string("SAME_UPPER"));
      SetAttr(one, "ceil_mode", int64_t{1});
      same.Output("y");
      auto s = ImportOnnxModel(same.model, "same.onnx", {});
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      EXPECT_EQ(s->ops[0].task.ToSpec(), "pool:1,4,8,8,1,1,2,0:float32");
    } else {
      ASSERT_FALSE(m.ok());
      EXPECT_NE(m.status().message().find("MaxPool (ceil_mode, with a partial last window) x1"), std::string::npos)
          << m.status().message();
    }
  }
}

TEST(ParseInputShapeTest, GivenNameAndDims_WeShouldParseBothForms) {
  auto a = ParseInputShape("input.1:1x3x224x224");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "input.1");
  EXPECT_EQ(a->second, (std::vector<int64_t>{1, 3, 224, 224}));
  auto b = ParseInputShape("x:[2,3,8,8]");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->second, (std::vector<int64_t>{2, 3, 8, 8}));
  EXPECT_FALSE(ParseInputShape("1x3x224x224").ok());
  EXPECT_FALSE(ParseInputShape("x:1xNx3").ok());
}

// A dim past a task's bound made every layer it reaches a rejected task, listed as not tuned, and `tune` went on
// with the rest (exit 0); a trailing separator dropped a dim.
TEST(ParseInputShapeTest, GivenADimPastTheTaskBoundOrAMissingDim_WeShouldRefuseIt) {
  auto huge = ParseInputShape("data:1x3x99999999999x2");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("'99999999999' is larger than 16777216"), std::string::npos)
      << huge.status().ToString();
  EXPECT_TRUE(ParseInputShape("data:1x3x16777216x2").ok());
  for (const char* cut : {"data:1x3x8x", "data:[1,3,8,]"}) {
    auto r = ParseInputShape(cut);
    ASSERT_FALSE(r.ok()) << cut;
    EXPECT_NE(r.status().message().find("is missing"), std::string::npos) << r.status().ToString();
  }
}

// The same input twice: the last value won without a word.
TEST(ParseInputShapeTest, GivenAnInputNamedTwice_WeShouldRefuseItSayingBothShapes) {
  auto twice = ParseInputShapes({"data:4x3x32x32", "other:1x8", "data:2x3x32x32"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(twice.status().message(),
            "--input-shape names the input 'data' twice (4x3x32x32 and 2x3x32x32); give each input once");
  auto two = ParseInputShapes({"data:4x3x32x32", "other:[1,8]"});
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->size(), 2u);
  EXPECT_EQ(two->at("data"), (std::vector<int64_t>{4, 3, 32, 32}));
  EXPECT_EQ(two->at("other"), (std::vector<int64_t>{1, 8}));
}

// The real torchvision exports in ../shared/models next to the checkout (weights stripped), or in
// $TUNEFLEET_MODELS_DIR; absent in a fresh clone, then skipped.
TEST(SharedModelsTest, GivenTheStrippedTorchvisionModels_WeShouldReproduceTheKnownWorkloadCounts) {
  const char* env = std::getenv("TUNEFLEET_MODELS_DIR");
  const std::string dir = env != nullptr ? std::string(env) + "/"
                                         : (fs::path(__FILE__).parent_path() / "../../shared/models/").string();
  if (!fs::exists(dir + "resnet18.stripped.onnx")) GTEST_SKIP() << "no " << dir;
  struct Want { std::string file; size_t distinct, occurrences, depthwise; };
  for (const Want& w : {Want{"resnet18.stripped.onnx", 12, 21, 0}, Want{"mobilenet_v2.stripped.onnx", 31, 53, 10}}) {
    auto m = ImportOnnxFile(dir + w.file, {});
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    std::set<std::string> distinct, dw;
    size_t n = 0;
    for (const auto& op : m->ops) {
      if (op.task.op == "pool") continue;
      ++n;
      distinct.insert(op.task.ToSpec());
      if (op.task.op == "dwconv2d") dw.insert(op.task.ToSpec());
    }
    EXPECT_EQ(distinct.size(), w.distinct) << w.file;
    EXPECT_EQ(n, w.occurrences) << w.file;
    EXPECT_EQ(dw.size(), w.depthwise) << w.file;
  }
}

}  // namespace
}  // namespace tunefleet

#include "tuner/model_tasks.h"

#include <sstream>

#include <gtest/gtest.h>

#include "tuner/test_models.h"

namespace tunefleet {
namespace {

ImportedModel Import(onnx::ModelProto model, const std::string& name) {
  auto m = ImportOnnxModel(model, name, {});
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : ImportedModel{};
}

std::vector<std::pair<std::string, int64_t>> SpecsAndCounts(const std::vector<ModelTask>& tasks) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& t : tasks) out.emplace_back(t.task.ToSpec(), t.count);
  return out;
}

TEST(ModelTasksTest, GivenTheResNetLikeModel_WeShouldGetSevenTasksWithTheRepeatedConvCountedFourTimes) {
  auto tasks = BuildModelTasks(Import(MakeResNetLikeModel(), "resnet"), {});
  std::vector<std::pair<std::string, int64_t>> want = {
      {"conv2d:1,3,32,32,16,3,3,1,1,bias=1:float32", 1},
      {"conv2d:1,16,32,32,16,3,3,1,1,bias=1:float32", 4},
      {"conv2d:1,16,32,32,32,3,3,2,1,bias=1:float32", 1},
      {"conv2d:1,32,16,16,32,3,3,1,1,bias=1:float32", 1},
      {"conv2d:1,16,32,32,32,1,1,2,0,bias=1:float32", 1},
      {"pool:1,32,16,16,16,16,1,0,mode=avg,global=1:float32", 1},
      {"gemm:1,10,32,transb=1,bias=1:float32", 1},
  };
  EXPECT_EQ(SpecsAndCounts(tasks), want);
  EXPECT_EQ(tasks[1].activations, (std::map<std::string, int64_t>{{"none", 2}, {"relu", 2}}));
  EXPECT_EQ(tasks[1].nodes.size(), 4u);
}

TEST(ModelTasksTest, GivenSplitActivations_WeShouldSeparateTheReluEpilogueIntoItsOwnTask) {
  TaskListOptions options;
  options.split_activations = true;
  auto tasks = BuildModelTasks(Import(MakeResNetLikeModel(), "resnet"), options);
  ASSERT_EQ(tasks.size(), 8u);
  EXPECT_EQ(tasks[0].task.ToSpec(), "conv2d:1,3,32,32,16,3,3,1,1,bias=1,act=relu:float32");
  EXPECT_EQ(tasks[1].count, 2);
  EXPECT_EQ(tasks[2].task.ToSpec(), "conv2d:1,16,32,32,16,3,3,1,1,bias=1:float32");
  EXPECT_EQ(tasks[2].count, 2);
}

TEST(ModelTasksTest, GivenTheMobileNetLikeModel_WeShouldCountTheRepeatedDepthwiseAndPointwiseBlocks) {
  auto tasks = BuildModelTasks(Import(MakeMobileNetLikeModel(), "mobilenet"), {});
  ASSERT_EQ(tasks.size(), 7u);
  EXPECT_EQ(tasks[1].task.ToSpec(), "dwconv2d:1,16,16,16,3,3,1,1,bias=1:float32");
  EXPECT_EQ(tasks[1].count, 2);
  EXPECT_EQ(tasks[1].activations.at("relu6"), 2);
  EXPECT_EQ(tasks[2].task.ToSpec(), "conv2d:1,16,16,16,16,1,1,1,0,bias=1:float32");
  EXPECT_EQ(tasks[2].count, 2);
}

TEST(ModelTasksTest, GivenFloat16ForConvOnly_WeShouldLeaveDenseAndPoolInFloat32) {
  TaskListOptions options;
  options.precision.precision = Precision::kFloat16;
  auto ops = ParseMixedPrecisionOps("conv2d");
  ASSERT_TRUE(ops.ok());
  options.precision.ops = *ops;
  auto tasks = BuildModelTasks(Import(MakeMobileNetLikeModel(), "mobilenet"), options);
  for (const auto& t : tasks) {
    bool conv = t.task.op == "conv2d" || t.task.op == "dwconv2d";
    EXPECT_EQ(t.task.precision, conv ? Precision::kFloat16 : Precision::kFloat32) << t.task.ToSpec();
  }
}

TEST(ModelTasksTest, GivenAnUnknownMixedPrecisionOp_WeShouldNameIt) {
  auto ops = ParseMixedPrecisionOps("conv2d,softmax");
  ASSERT_FALSE(ops.ok());
  EXPECT_NE(ops.status().message().find("unknown op 'softmax'"), std::string::npos);
  auto tvmc = ParseMixedPrecisionOps("nn.conv2d,nn.dense");
  ASSERT_TRUE(tvmc.ok());
  EXPECT_EQ(*tvmc, (std::set<std::string>{"conv2d", "dense"}));
}

TEST(ModelTasksTest, GivenTasks_WeShouldRenderATableAndJsonWithCountsAndSpecs) {
  ImportedModel model = Import(MakeResNetLikeModel(), "resnet.onnx");
  auto tasks = BuildModelTasks(model, {});
  std::string table = FormatTaskTable(model, tasks);
  EXPECT_NE(table.find("7 tasks, 10 tunable operators in resnet.onnx (opset 13)"), std::string::npos) << table;
  EXPECT_NE(table.find("not tuned (7 nodes): Add x3, Flatten x1, Relu x3"), std::string::npos) << table;
  EXPECT_NE(table.find("[none x2, relu x2]"), std::string::npos) << table;

  nlohmann::json j = TasksToJson(tasks);
  ASSERT_EQ(j.size(), 7u);
  EXPECT_EQ(j[1]["index"], 2);  // numbered from 1, as the table's "#" and tune's "task 2/7"
  EXPECT_EQ(j[1]["op"], "conv2d");
  EXPECT_EQ(j[1]["count"], 4);
  EXPECT_EQ(j[1]["spec"], "conv2d:1,16,32,32,16,3,3,1,1,bias=1:float32");
  EXPECT_EQ(j[1]["params"]["K"], 16);
  EXPECT_EQ(j[1]["workload"]["weight"], nlohmann::json({16, 16, 3, 3}));
}

// A float16 model's layers are half whatever --precision says: float32 kernels would take buffers of another type
// than the model's (they were listed as float32 tasks). float16-acc32, asked for an op kind, keeps them half and
// accumulates in float.
TEST(ModelTasksTest, GivenAFloat16Model_ItsLayersShouldStayHalfUnlessFloat16Acc32IsAsked) {
  ImportedModel model = Import(WithElemType(MakeResNetLikeModel(), onnx::TensorProto::FLOAT16), "f16.onnx");
  for (Precision asked : {Precision::kFloat32, Precision::kFloat16, Precision::kFloat16Acc32}) {
    TaskListOptions options;
    options.precision.precision = asked;
    auto tasks = BuildModelTasks(model, options);
    ASSERT_EQ(tasks.size(), 7u);
    for (const auto& t : tasks) {
      const bool lowered = asked == Precision::kFloat16Acc32 && t.task.op != "pool";  // pool: not in the default ops
      EXPECT_EQ(t.task.precision, lowered ? Precision::kFloat16Acc32 : Precision::kFloat16)
          << PrecisionName(asked) << ": " << t.task.ToSpec();
    }
  }
  // A float32 model is as it was: --precision float32 (the default) leaves it float32.
  for (const auto& t : BuildModelTasks(Import(MakeResNetLikeModel(), "resnet"), {}))
    EXPECT_EQ(t.task.precision, Precision::kFloat32) << t.task.ToSpec();
}

// The row was printed into a 512-byte buffer: a long workload (a MatMul of many batch dims) cut it before its spec.
TEST(ModelTasksTest, GivenAWorkloadLongerThanALine_TheTableRowShouldKeepItsCountAndSpec) {
  ImportedModel model;
  model.name = "long.onnx";
  model.opset = 13;
  ModelTask t;
  auto task = Task::Parse("gemm:4,5,8");
  ASSERT_TRUE(task.ok());
  t.task = *task;
  t.count = 3;
  t.activations["relu"] = 3;
  std::vector<int64_t> a(300, 1), b(300, 1);
  a.insert(a.end(), {4, 8});
  b.insert(b.end(), {8, 5});
  t.workload = {{"a", a}, {"b", b}, {"transb", false}};
  std::istringstream table(FormatTaskTable(model, {t}));
  std::string header, row;
  std::getline(table, header);
  std::getline(table, row);
  EXPECT_GT(row.size(), 1200u);
  EXPECT_EQ(row.rfind("   1  gemm      1x1x1", 0), 0u) << row;
  EXPECT_TRUE(row.ends_with("x1x8x5     3  gemm:4,5,8:float32  [relu x3]")) << row;
  // Short rows keep their columns.
  ImportedModel resnet = Import(MakeResNetLikeModel(), "resnet.onnx");
  const std::string short_table = FormatTaskTable(resnet, BuildModelTasks(resnet, {}));
  EXPECT_EQ(short_table.substr(0, short_table.find('\n')),
            "   #  op        workload                                 count  spec");
  EXPECT_NE(short_table.find("   7  gemm      1x32 * 10x32^T                               1  "
                             "gemm:1,10,32,transb=1,bias=1:float32\n"),
            std::string::npos)
      << short_table;
}

}  // namespace
}  // namespace tunefleet

#include "tuner/task_workload.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tunefleet {
namespace {

const Task kGemm = Task::Parse("gemm:64,64,64:float32").value();

TEST(TaskWorkloadTest, GivenAModelTask_TheNewWorkloadShouldCountItByModel) {
  const nlohmann::json j = nlohmann::json::parse(LogWorkloadJson(kGemm, 3, "bert.onnx"));
  EXPECT_EQ(j["op"], "gemm");
  EXPECT_EQ(j["precision"], "float32");
  EXPECT_EQ(j["count"], 3);
  EXPECT_EQ(j["models"], (nlohmann::json{{"bert.onnx", 3}}));
  EXPECT_FALSE(nlohmann::json::parse(LogWorkloadJson(kGemm, 1, "")).contains("models"));
}

TEST(TaskWorkloadTest, GivenAnotherModel_ItsCountShouldBeAddedAndTheSameModelsReplaced) {
  const std::string first = LogWorkloadJson(kGemm, 3, "a.onnx");
  const std::optional<std::string> both = WithModelCount(first, kGemm, 2, "b.onnx");
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(nlohmann::json::parse(*both)["count"], 5);
  EXPECT_EQ(ModelCounts(*both), (std::map<std::string, int64_t>{{"a.onnx", 3}, {"b.onnx", 2}}));
  EXPECT_FALSE(WithModelCount(*both, kGemm, 3, "a.onnx").has_value());  // already says so
  const std::optional<std::string> changed = WithModelCount(*both, kGemm, 7, "a.onnx");  // the model was edited
  ASSERT_TRUE(changed.has_value());
  EXPECT_EQ(nlohmann::json::parse(*changed)["count"], 9);
  EXPECT_FALSE(WithModelCount(*both, kGemm, 1, "").has_value());
}

TEST(TaskWorkloadTest, GivenAWorkloadWithoutModels_ItsCountShouldBeReplacedNotAddedTo) {
  // Written before counts were kept by model: most likely the same model's, resumed.
  const std::optional<std::string> j = WithModelCount(R"({"op":"gemm","count":4})", kGemm, 4, "a.onnx");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(nlohmann::json::parse(*j)["count"], 4);
  EXPECT_EQ(nlohmann::json::parse(*j)["op"], "gemm");
  EXPECT_TRUE(ModelCounts("{}").empty());
  EXPECT_TRUE(ModelCounts("not json").empty());
  const std::optional<std::string> fresh = WithModelCount("not json", kGemm, 2, "a.onnx");
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(nlohmann::json::parse(*fresh)["params"]["M"], 64);
}

}  // namespace
}  // namespace tunefleet

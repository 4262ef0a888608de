#include "tuner/task_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <utility>

#include "common/temp_dir_testing.h"
#include "tuner/model_tasks.h"
#include "tuner/test_models.h"

namespace tunefleet {
namespace {

std::vector<std::pair<std::string, int64_t>> SpecsAndCounts(const std::vector<ListedTask>& tasks) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& t : tasks) out.emplace_back(t.task.ToSpec(), t.count);
  return out;
}

std::string ErrorOf(std::string_view text) {
  Result<std::vector<ListedTask>> r = ParseTaskList(text, "tasks.txt");
  return r.ok() ? "parsed " + std::to_string(r->size()) + " tasks" : r.status().message();
}

TEST(TaskFileTest, GivenSpecsCountsCommentsAndBlankLines_WeShouldReadTheTasksInFileOrder) {
  const std::string text =
      "# the heavy layers\n"
      "\n"
      "conv2d:1,16,32,32,16,3,3,1,1 4   # the repeated block\n"
      "  gemm:64,64,64:float16\r\n"
      "\t# indented comment\n"
      "dwconv2d:1,8,8,8,3,3,1,1\t2";  // no newline at the end
  Result<std::vector<ListedTask>> tasks = ParseTaskList(text, "tasks.txt");
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  const std::vector<std::pair<std::string, int64_t>> want = {
      {"conv2d:1,16,32,32,16,3,3,1,1:float32", 4},
      {"gemm:64,64,64:float16", 1},
      {"dwconv2d:1,8,8,8,3,3,1,1:float32", 2},
  };
  EXPECT_EQ(SpecsAndCounts(*tasks), want);
}

TEST(TaskFileTest, GivenABadLine_WeShouldNameTheFileAndLineAndWhatIsWrong) {
  EXPECT_EQ(ErrorOf("gemm:8,8,8\n\ngemm:8,8,8:int8\n"),
            "tasks.txt:3: gemm:8,8,8:int8: unknown precision 'int8' (expected float32, float16 or float16-acc32)");
  EXPECT_EQ(ErrorOf("gemm: 8, 8, 8\n"),
            "tasks.txt:1: expected SPEC [COUNT], got 4 fields (a spec holds no spaces): gemm: 8, 8, 8");
  for (const char* count : {"0", "-1", "+2", "02", "0x10", "1.5", "1000001", "99999999999999999999", "two"}) {
    EXPECT_EQ(ErrorOf(std::string("gemm:8,8,8 ") + count),
              std::string("tasks.txt:1: the count '") + count +
                  "' is not a whole number from 1 to 1000000 in decimal digits")
        << count;
  }
  EXPECT_EQ(ErrorOf("gemm:8,8,8 1000000"), "parsed 1 tasks");
  // A control character in the line is shown escaped: the error stays one line.
  EXPECT_EQ(ErrorOf("gemm:8,8,8 1 \x1b[2J"),
            "tasks.txt:1: expected SPEC [COUNT], got 3 fields (a spec holds no spaces): gemm:8,8,8 1 \\x1b[2J");
}

// Windows editors start a UTF-8 file with a byte-order mark and end its lines with CR LF: neither is part of a spec
// (the mark made the first line's op unknown, shown with an invisible character).
TEST(TaskFileTest, GivenAByteOrderMarkAndCrLf_WeShouldReadTheTasksAndKeepCrOutOfErrors) {
  Result<std::vector<ListedTask>> tasks = ParseTaskList("\xef\xbb\xbfgemm:8,8,8 2\r\ngemm:16,16,16\r\n", "t.txt");
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  EXPECT_EQ(SpecsAndCounts(*tasks),
            (std::vector<std::pair<std::string, int64_t>>{{"gemm:8,8,8:float32", 2}, {"gemm:16,16,16:float32", 1}}));
  EXPECT_EQ(ErrorOf("gemm:8,8,8 1 2\r\n"),
            "tasks.txt:1: expected SPEC [COUNT], got 3 fields (a spec holds no spaces): gemm:8,8,8 1 2");
}

// A spec of megabytes on one line (a task file may hold 16 MiB) is quoted in part: the error stays a line.
TEST(TaskFileTest, GivenAHugeSpec_TheErrorShouldQuoteItInPart) {
  const std::string spec = "gemm:8,8,8" + std::string(5'000'000, ',');
  const std::string error = ErrorOf(spec);
  EXPECT_EQ(error.rfind("tasks.txt:1: gemm:8,8,8,,,", 0), 0u) << error.substr(0, 100);
  EXPECT_LT(error.size(), 500u);
  EXPECT_NE(error.find("bytes)"), std::string::npos) << error;
}

TEST(TaskFileTest, GivenNoTask_WeShouldSaySoAndShowTheFormat) {
  for (const char* text : {"", "\n\n", "# only a comment\n   \n"}) {
    EXPECT_EQ(ErrorOf(text), "tasks.txt: lists no task (one SPEC [COUNT] per line, e.g. gemm:256,256,256 2)")
        << text;
  }
}

TEST(TaskFileTest, GivenAModelsTaskList_WeShouldReadBackTheSameTasksAndCounts) {
  onnx::ModelProto proto = MakeResNetLikeModel();
  Result<ImportedModel> model = ImportOnnxModel(proto, "resnet", {});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TaskListOptions split;
  split.split_activations = true;  // specs with act=relu, which must parse back too
  for (const TaskListOptions& options : {TaskListOptions{}, split}) {
    std::vector<ListedTask> listed;
    for (const ModelTask& t : BuildModelTasks(*model, options)) listed.push_back({t.task, t.count});
    const std::string text = FormatTaskList(listed, "resnet: written\nby a test");
    EXPECT_EQ(text.rfind("# resnet: written\\x0aby a test\n", 0), 0u) << text;  // the header stays one line
    Result<std::vector<ListedTask>> back = ParseTaskList(text, "resnet.tasks");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(SpecsAndCounts(*back), SpecsAndCounts(listed));
  }
}

TEST(TaskFileTest, GivenAPath_WeShouldReadTheFileOrSayWhyNot) {
  TempDir dir;
  const std::string path = dir.path() + "/tasks.txt";
  std::ofstream(path) << "gemm:16,16,16 3\n";
  Result<std::vector<ListedTask>> tasks = ReadTaskFile(path);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  EXPECT_EQ(SpecsAndCounts(*tasks), (std::vector<std::pair<std::string, int64_t>>{{"gemm:16,16,16:float32", 3}}));

  Result<std::vector<ListedTask>> missing = ReadTaskFile(dir.path() + "/nope.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), dir.path() + "/nope.txt: cannot read it (No such file or directory)");
  EXPECT_EQ(missing.status().code(), Status::Code::kInvalidArgument);  // bad input, exit 2
  Result<std::vector<ListedTask>> folder = ReadTaskFile(dir.path());
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.status().message(), dir.path() + ": a folder, not a task file");

  const std::string big = dir.path() + "/big.txt";
  {
    std::ofstream out(big);
    const std::string line = "# " + std::string(1022, 'x') + "\n";
    for (size_t written = 0; written <= kMaxTaskFileBytes; written += line.size()) out << line;
  }
  Result<std::vector<ListedTask>> too_big = ReadTaskFile(big);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().message(), big + ": larger than 16 MiB: not a task file (one SPEC [COUNT] per line)");
}

}  // namespace
}  // namespace tunefleet

#include "deploy/runtime/kernel_pack.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>

#include <gtest/gtest.h>

#include "deploy/runtime/gemm_pack_testing.h"
#include "deploy/runtime/pack_fingerprint.h"
#include "deploy/runtime/pack_spec.h"

namespace tunefleet::runtime {
namespace {

KernelPack PackOf(const nlohmann::json& j) {
  auto pack = KernelPack::Parse(j.dump());
  EXPECT_TRUE(pack.ok()) << pack.status().ToString();
  return std::move(pack).value();
}

TEST(KernelPackTest, GivenAPack_WeShouldReadItsEntriesAndPrograms) {
  KernelPack pack = PackOf(GemmPack({GemmPackEntry(32, 32, 32)}));
  ASSERT_EQ(pack.kernels().size(), 1u);
  const PackedKernel& k = pack.kernels()[0];
  EXPECT_EQ(k.template_name, "gemm.buffer");
  EXPECT_EQ(k.program.launches.size(), 2u);
  EXPECT_TRUE(k.program.launches[0].setup);
  EXPECT_EQ(k.program.launches[1].local_size, (std::vector<uint64_t>{8, 8}));
  EXPECT_TRUE(k.program.FindBuffer("A")->random_init);
  EXPECT_EQ(pack.device().fingerprint, "fp");
}

TEST(KernelPackTest, GivenTheExactWorkload_FindShouldReturnItsTunedKernel) {
  KernelPack pack = PackOf(GemmPack({GemmPackEntry(64, 64, 64), GemmPackEntry(32, 32, 32)}));
  auto m = pack.Find("gemm:32,32,32:float32");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->kind, MatchKind::kExact);
  EXPECT_EQ(m->kernel->task, "gemm:32,32,32:float32");
}

TEST(KernelPackTest, GivenAWorkloadTunedUnderSeveralTemplates_FindShouldReturnTheFastestWhereverItIsListed) {
  nlohmann::json slow = GemmPackEntry(32, 32, 32, "slow.template");
  slow["latency_ms"] = 3.0;
  nlohmann::json fast = GemmPackEntry(32, 32, 32, "fast.template");
  fast["latency_ms"] = 1.0;
  nlohmann::json middle = GemmPackEntry(32, 32, 32, "middle.template");
  middle["latency_ms"] = 2.0;
  nlohmann::json unknown = GemmPackEntry(32, 32, 32, "unmeasured.template");
  unknown.erase("latency_ms");  // a pack written by hand: no latency, so it is not taken for the fastest
  for (const nlohmann::json& kernels : {nlohmann::json{slow, fast, middle, unknown},
                                        nlohmann::json{unknown, middle, slow, fast}}) {
    KernelPack pack = PackOf(GemmPack(kernels));
    auto exact = pack.Find("gemm:32,32,32:float32");
    ASSERT_TRUE(exact.ok());
    EXPECT_EQ(exact->kind, MatchKind::kExact);
    EXPECT_EQ(exact->kernel->template_name, "fast.template");
    auto nearest = pack.Find("gemm:40,32,32:float32");  // the same holds for the nearest workload's kernels
    ASSERT_TRUE(nearest.ok());
    EXPECT_EQ(nearest->kind, MatchKind::kNearest);
    EXPECT_EQ(nearest->kernel->template_name, "fast.template");
  }
}

TEST(KernelPackTest, GivenAnUnpackedWorkload_FindShouldReturnTheNearestOfTheSameOp) {
  KernelPack pack = PackOf(GemmPack({GemmPackEntry(256, 256, 256), GemmPackEntry(32, 32, 32)}));
  auto m = pack.Find("gemm:40,32,32:float32");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->kind, MatchKind::kNearest);
  EXPECT_EQ(m->kernel->task, "gemm:32,32,32:float32");
}

TEST(KernelPackTest, GivenOnlyAFallback_FindShouldReturnIt) {
  KernelPack pack = PackOf(GemmPack(nlohmann::json::array(), {GemmPackEntry(16, 16, 16)}));
  auto m = pack.Find("gemm:64,64,64:float32");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->kind, MatchKind::kFallback);
}

TEST(KernelPackTest, GivenAnotherOpOrPrecision_FindShouldSayNotFound) {
  KernelPack pack = PackOf(GemmPack({GemmPackEntry(32, 32, 32)}));
  EXPECT_EQ(pack.Find("gemm:32,32,32:float16").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(pack.Find("conv2d:1,3,8,8,4,3,3,1,1:float32").status().code(), Status::Code::kNotFound);
}

// Read as strtod reads numbers, each of these was taken for gemm:64,64,64 and given the 64^3 kernel.
TEST(KernelPackTest, GivenAWorkloadNotWrittenAsTheTunerWritesIt_FindShouldRefuseItNamingWhatIsWrong) {
  KernelPack pack = PackOf(GemmPack({GemmPackEntry(64, 64, 64)}));
  for (const char* spec : {"gemm:064,64,64:float32", "gemm:64, 64,64:float32", "gemm:+64,64,64:float32",
                           "gemm:64,64,64 :float32", "gemm:64,64,64.0:float32", "gemm:64,64,6.4e1:float32",
                           "gemm:64,64,0x40:float32", "gemm:64,,64,64:float32", "gemm:64,64,64,:float32",
                           "gemm:64,64,64: float32", "gemm:64,64,64:fp32", "gemm:64,64,64::float32",
                           "gemm:64,64,99999999999999999999:float32", "gemm:64,64,64,batch=01:float32",
                           " gemm:64,64,64"}) {
    auto m = pack.Find(spec);
    ASSERT_FALSE(m.ok()) << spec << " found " << m->kernel->task;
    EXPECT_EQ(m.status().code(), Status::Code::kInvalidArgument) << spec << ": " << m.status().ToString();
    EXPECT_NE(m.status().message().find("is not a task spec op:v1,v2,"), std::string::npos) << m.status().ToString();
  }
  auto zero = pack.Find("gemm:064,64,64:float32");
  EXPECT_NE(zero.status().message().find("workload \"gemm:064,64,64:float32\" is not a task spec"), std::string::npos)
      << zero.status().ToString();
  EXPECT_NE(zero.status().message().find("size '064' is not a non-negative integer as the tuner writes it"),
            std::string::npos)
      << zero.status().ToString();
  // The canonical spelling still finds it, with or without the precision (float32 when left out); so does a 0.
  for (const char* spec : {"gemm:64,64,64:float32", "gemm:64,64,64"}) {
    auto m = pack.Find(spec);
    ASSERT_TRUE(m.ok()) << spec << ": " << m.status().ToString();
    EXPECT_EQ(m->kind, MatchKind::kExact) << spec;
  }
  EXPECT_TRUE(pack.Find("gemm:0,64,64:float32").ok());
}

// A pack entry of `spec` (a GEMM workload with named parameters): the program of the plain 16^3 GEMM entry.
nlohmann::json NamedGemmEntry(const std::string& spec) {
  nlohmann::json e = GemmPackEntry(16, 16, 16);
  e["task"] = spec;
  return e;
}

nlohmann::json GemmSpecExtras() {
  return {{"gemm",
           {{"batch", {{"default", 1}}},
            {"transb", {{"default", 0}}},
            {"act", {{"default", 0}, {"names", {"none", "relu", "relu6"}}}}}}};
}

TEST(KernelPackTest, GivenAWorkloadSpellingOutADefaultOrAValueByNumber_FindShouldReturnItsTunedKernel) {
  nlohmann::json j = GemmPack({GemmPackEntry(32, 32, 32), NamedGemmEntry("gemm:16,16,16,transb=1,act=relu:float32")});
  j["spec_extras"] = GemmSpecExtras();
  KernelPack pack = PackOf(j);
  for (const char* spelled : {"gemm:32,32,32,batch=1", "gemm:32,32,32,transb=0,act=none:float32",
                              "gemm:32,32,32,act=0"}) {
    auto m = pack.Find(spelled);
    ASSERT_TRUE(m.ok()) << spelled << ": " << m.status().ToString();
    EXPECT_EQ(m->kind, MatchKind::kExact) << spelled;
    EXPECT_EQ(m->kernel->task, "gemm:32,32,32:float32") << spelled;
  }
  auto by_number = pack.Find("gemm:16,16,16,act=1,transb=1,batch=1");
  ASSERT_TRUE(by_number.ok()) << by_number.status().ToString();
  EXPECT_EQ(by_number->kind, MatchKind::kExact);
  EXPECT_EQ(by_number->kernel->task, "gemm:16,16,16,transb=1,act=relu:float32");
  // A value the pack does not know stays as written: nothing of it is tuned.
  auto other = pack.Find("gemm:32,32,32,act=gelu");
  EXPECT_EQ(other.status().code(), Status::Code::kNotFound) << other.status().ToString();
}

TEST(KernelPackTest, GivenOnlyAFallbackOfOtherNamedParameters_FindShouldNotReturnIt) {
  // The fallback computes a plain GEMM: a transposed-B or biased workload would get a wrong product from it.
  nlohmann::json j = GemmPack(nlohmann::json::array(), {GemmPackEntry(16, 16, 16)});
  j["spec_extras"] = GemmSpecExtras();
  KernelPack pack = PackOf(j);
  auto transposed = pack.Find("gemm:64,64,64,transb=1");
  EXPECT_EQ(transposed.status().code(), Status::Code::kNotFound) << transposed.status().ToString();
  EXPECT_NE(transposed.status().message().find("with transb=1"), std::string::npos) << transposed.status().ToString();
  auto plain = pack.Find("gemm:64,64,64,transb=0");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->kind, MatchKind::kFallback);

  nlohmann::json both = GemmPack(nlohmann::json::array(),
                                 {GemmPackEntry(16, 16, 16), NamedGemmEntry("gemm:16,16,16,transb=1:float32")});
  KernelPack with_both = PackOf(both);
  auto fallback = with_both.Find("gemm:64,64,64,transb=1");
  ASSERT_TRUE(fallback.ok()) << fallback.status().ToString();
  EXPECT_EQ(fallback->kernel->task, "gemm:16,16,16,transb=1:float32");
}

// A workload the op cannot be: other than the op's number of sizes, or a parameter the op does not take. The
// nearest kernel's or the fallback's program is for another workload, and was given for "gemm:64" before.
TEST(KernelPackTest, GivenAWorkloadOfAnotherNumberOfSizesOrAnUnknownParameter_FindShouldRefuseIt) {
  nlohmann::json j = GemmPack({GemmPackEntry(128, 128, 128)}, {GemmPackEntry(16, 16, 16)});
  j["spec_extras"] = GemmSpecExtras();
  KernelPack pack = PackOf(j);
  for (const char* spec : {"gemm:64", "gemm:64,64", "gemm:64,64,64,64"}) {
    auto m = pack.Find(spec);
    ASSERT_FALSE(m.ok()) << spec << " found " << m->kernel->task;
    EXPECT_EQ(m.status().code(), Status::Code::kInvalidArgument) << spec;
    EXPECT_NE(m.status().message().find("sizes; gemm takes 3"), std::string::npos) << m.status().ToString();
  }
  auto unknown = pack.Find("gemm:64,64,64,frobnicate=7");
  ASSERT_FALSE(unknown.ok()) << unknown->kernel->task;
  EXPECT_EQ(unknown.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("names 'frobnicate', which gemm does not take"), std::string::npos)
      << unknown.status().ToString();
  auto nearest = pack.Find("gemm:64,64,64");  // the op's own form still finds its nearest kernel
  ASSERT_TRUE(nearest.ok()) << nearest.status().ToString();
  EXPECT_EQ(nearest->kind, MatchKind::kNearest);
}

TEST(KernelPackTest, GivenMalformedSpecExtras_ParseShouldRefuseThemNamingWhere) {
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {nlohmann::json::array(), "spec_extras"},
      {{{"gemm", {{"batch", {{"default", "1"}}}}}}, "spec_extras.gemm.batch.default"},
      {{{"gemm", {{"batch", {{"default", -1}}}}}}, "spec_extras.gemm.batch.default"},
      {{{"gemm", {{"batch", nlohmann::json::object()}}}}, "default"},
      {{{"gemm", {{"act", {{"default", 0}, {"names", {"none", 3}}}}}}}, "spec_extras.gemm.act.names"},
      {{{"gemm", {{"act", {{"default", 0}, {"names", {"no ne"}}}}}}}, "spec_extras.gemm.act.names"},
      {{{"1gemm", nlohmann::json::object()}}, "spec_extras"},
      {{{"gemm", {{"bad name", {{"default", 0}}}}}}, "spec_extras.gemm"},
  };
  for (const auto& [extras, where] : cases) {
    nlohmann::json j = GemmPack({GemmPackEntry(32, 32, 32)});
    j["spec_extras"] = extras;
    auto pack = KernelPack::Parse(j.dump());
    ASSERT_FALSE(pack.ok()) << extras.dump();
    EXPECT_EQ(pack.status().code(), Status::Code::kCorruption) << extras.dump();
    EXPECT_NE(pack.status().message().find(where), std::string::npos) << extras.dump() << ": "
                                                                       << pack.status().ToString();
  }
}

TEST(KernelPackTest, GivenSomethingElse_ParseShouldRefuseIt) {
  EXPECT_EQ(KernelPack::Parse("[1,2]").status().code(), Status::Code::kCorruption);
  EXPECT_FALSE(KernelPack::Parse(R"({"format":"other"})").ok());
  auto missing = KernelPack::Load("/nonexistent/pack.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/pack.json"), std::string::npos);
}

// Loads pack texts from files in a temporary directory of its own, as an application loads a pack.
class KernelPackLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tf_kernel_pack_test_" + std::to_string(getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& text, const std::string& name = "pack.json") {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path;
  }
  Result<KernelPack> LoadText(const std::string& text) { return KernelPack::Load(Write(text)); }

  // The pack `mutate` makes of a valid one must be refused with `code` and a message holding each of `parts`.
  template <typename Mutate>
  void ExpectRefused(Mutate mutate, Status::Code code, std::initializer_list<std::string> parts) {
    nlohmann::json pack = Valid();
    mutate(pack);
    auto loaded = LoadText(pack.dump());
    ASSERT_FALSE(loaded.ok()) << pack.dump();
    EXPECT_EQ(loaded.status().code(), code) << loaded.status().ToString();
    for (const auto& part : parts) {
      EXPECT_NE(loaded.status().message().find(part), std::string::npos)
          << part << " in " << loaded.status().ToString();
    }
  }
  template <typename Mutate>
  void ExpectCorrupt(Mutate mutate, std::initializer_list<std::string> parts) {
    ExpectRefused(mutate, Status::Code::kCorruption, parts);
  }

  static nlohmann::json Valid() { return GemmPack({GemmPackEntry(8, 8, 8)}); }
  static nlohmann::json& Program(nlohmann::json& pack) { return pack["kernels"][0]["program"]; }
  static nlohmann::json& Launch(nlohmann::json& pack) { return Program(pack)["launches"][1]; }
  static nlohmann::json& Arg(nlohmann::json& pack, int i) { return Launch(pack)["args"][i]; }

  std::filesystem::path dir_;
};

TEST_F(KernelPackLoadTest, GivenAValidPack_LoadShouldReadItAndComputeBufferBytes) {
  nlohmann::json pack = Valid();
  Program(pack)["images"] = {{{"name", "I"}, {"type", "float16"}, {"width", 4}, {"height", 2}}};
  Arg(pack, 3) = {{"f32", -0.5}};
  Arg(pack, 4) = {{"i32", std::numeric_limits<int32_t>::min()}};
  auto loaded = LoadText(pack.dump());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const PackProgram& p = loaded->kernels()[0].program;
  EXPECT_EQ(p.FindBuffer("C")->bytes, 64u * 4);
  EXPECT_EQ(p.images[0].type, ElemType::kFloat16);
  EXPECT_EQ(p.launches[1].args[3].f32, -0.5f);
  EXPECT_EQ(p.launches[1].args[4].i32, std::numeric_limits<int32_t>::min());
}

// The exporter's fingerprint of each program: a pack whose program matches it loads; one whose program was edited
// after the export (a source's "#define N 64" made 256, which indexed past the buffers) is refused naming the entry.
TEST_F(KernelPackLoadTest, GivenAProgramFingerprint_LoadShouldRefuseAProgramThatNoLongerMatchesIt) {
  nlohmann::json pack = Valid();
  pack["kernels"][0]["program_fnv"] = ProgramFingerprint(Program(pack));
  ASSERT_TRUE(LoadText(pack.dump(2)).ok()) << "the fingerprint of the program as written (indented or not)";
  Launch(pack)["source"] = Launch(pack)["source"].get<std::string>() + "\n#define N 256\n";
  ExpectCorrupt([&](auto& p) { p = pack; },
                {"kernels[0] (gemm:8,8,8:float32): program_fnv: \"", "is not the program's fingerprint",
                 "the program was edited or is damaged"});
  ExpectCorrupt([](auto& p) { p["kernels"][0]["program_fnv"] = 7; }, {"program_fnv"});
  // A fallback's program the same.
  nlohmann::json with_fallback = Valid();
  with_fallback["fallbacks"] = nlohmann::json::array({with_fallback["kernels"][0]});
  with_fallback["fallbacks"][0]["program_fnv"] = "0000000000000000";
  ExpectCorrupt([&](auto& p) { p = with_fallback; }, {"fallbacks[0]", "is not the program's fingerprint"});
}

// The entry's fingerprint covers its task and template too: a 64^3 program relabelled 128^3 would be found for the
// 128^3 workload, and compute a corner of its product on the application's larger buffers.
TEST_F(KernelPackLoadTest, GivenAnEntryFingerprint_LoadShouldRefuseAnEntryWhoseTaskOrTemplateWasEdited) {
  nlohmann::json pack = GemmPack({GemmPackEntry(64, 64, 64)});
  nlohmann::json& entry = pack["kernels"][0];
  entry["entry_fnv"] = EntryFingerprint("gemm:64,64,64:float32", "gemm.buffer", entry["program"]);
  ASSERT_TRUE(LoadText(pack.dump(2)).ok());
  nlohmann::json relabelled = pack;
  relabelled["kernels"][0]["task"] = "gemm:128,128,128:float32";
  ExpectCorrupt([&](auto& p) { p = relabelled; },
                {"kernels[0] (gemm:128,128,128:float32): entry_fnv: \"", "is not the entry's fingerprint",
                 "its task, template or program was edited or is damaged"});
  nlohmann::json retemplated = pack;
  retemplated["kernels"][0]["template"] = "other.template";
  ExpectCorrupt([&](auto& p) { p = retemplated; }, {"is not the entry's fingerprint"});
  nlohmann::json edited = pack;
  edited["kernels"][0]["program"]["buffers"][0]["count"] = 1;
  ExpectCorrupt([&](auto& p) { p = edited; }, {"is not the entry's fingerprint"});
}

// What no single entry shows: an entry given twice (the same task and template), an op of two numbers of sizes, a
// named parameter the op does not take or not written as the tuner writes it (Find would never match it).
TEST_F(KernelPackLoadTest, GivenEntriesThatContradictEachOtherOrTheOpsDescription_LoadShouldRefuseThem) {
  ExpectCorrupt([](auto& p) { p["kernels"].push_back(p["kernels"][0]); },
                {"kernels[1] (gemm:8,8,8:float32): the same task and template as kernels[0]"});
  ExpectCorrupt([](auto& p) { p["fallbacks"] = {p["kernels"][0], p["kernels"][0]}; },
                {"fallbacks[1] (gemm:8,8,8:float32): the same task and template as fallbacks[0]"});
  ExpectCorrupt(
      [](auto& p) {
        p["kernels"].push_back(GemmPackEntry(16, 16, 16));
        p["kernels"][1]["task"] = "gemm:16,16:float32";
      },
      {"kernels[1] (gemm:16,16:float32): 2 sizes, where kernels[0] (gemm:8,8,8:float32) has 3"});
  auto with_extras = [](const std::string& spec) {
    return [spec](nlohmann::json& p) {
      p["spec_extras"] = {
          {"gemm", {{"batch", {{"default", 1}}}, {"act", {{"default", 0}, {"names", {"none", "relu"}}}}}}};
      p["kernels"].push_back(GemmPackEntry(16, 16, 16));
      p["kernels"][1]["task"] = spec;
    };
  };
  ExpectCorrupt(with_extras("gemm:16,16,16,frobnicate=7:float32"),
                {"kernels[1]", "gemm takes no parameter 'frobnicate'"});
  ExpectCorrupt(with_extras("gemm:16,16,16,batch=1:float32"), {"kernels[1]", "not written as the tuner writes it"});
  ExpectCorrupt(with_extras("gemm:16,16,16,act=1:float32"), {"kernels[1]", "not written as the tuner writes it"});
  nlohmann::json fine = Valid();
  with_extras("gemm:16,16,16,batch=2,act=relu:float32")(fine);
  EXPECT_TRUE(LoadText(fine.dump()).ok());
  // Two templates of one workload are two kernels, as the exporter writes them.
  nlohmann::json two = Valid();
  two["kernels"].push_back(GemmPackEntry(8, 8, 8, "other.template"));
  EXPECT_TRUE(LoadText(two.dump()).ok());
}

TEST_F(KernelPackLoadTest, GivenAFormatOrVersionOfTheWrongType_LoadShouldRefuseIt) {
  const auto invalid = Status::Code::kInvalidArgument;
  ExpectRefused([](auto& p) { p["format"] = 5; }, invalid, {"not a tunefleet kernel pack", "format 5"});
  ExpectRefused([](auto& p) { p["format"] = nullptr; }, invalid, {"not a tunefleet kernel pack"});
  ExpectRefused([](auto& p) { p["version"] = "1"; }, invalid, {"version must be an integer"});
  ExpectRefused([](auto& p) { p["version"] = true; }, invalid, {"version must be an integer", "true"});
  ExpectRefused([](auto& p) { p["version"] = 1.9; }, invalid, {"version must be an integer", "1.9"});
  ExpectRefused([](auto& p) { p["version"] = 1e300; }, invalid, {"version must be an integer"});
  ExpectRefused([](auto& p) { p["version"] = (uint64_t{1} << 32) + 1; }, invalid, {"version 4294967297"});
}

TEST_F(KernelPackLoadTest, GivenJsonNestedTooDeeply_LoadShouldRefuseItWithoutOverflowingTheStack) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  std::string unused_key = Valid().dump();
  unused_key.insert(1, "\"deep\":" + deep + ",");
  auto loaded = LoadText(unused_key);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), Status::Code::kCorruption);
  EXPECT_NE(loaded.status().message().find("nested deeper than 64"), std::string::npos) << loaded.status().ToString();

  nlohmann::json in_config = Valid();
  nlohmann::json nested = 1;
  for (int i = 0; i < 70; ++i) nested = nlohmann::json::array({nested});
  in_config["kernels"][0]["config"]["x"] = nested;
  EXPECT_EQ(LoadText(in_config.dump()).status().code(), Status::Code::kCorruption);
}

TEST_F(KernelPackLoadTest, GivenAPathThatIsNotARegularFile_LoadShouldRefuseIt) {
  auto directory = KernelPack::Load(dir_.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("is a directory"), std::string::npos) << directory.status().ToString();

  auto device = KernelPack::Load("/dev/zero");  // endless: would be read until memory runs out
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("/dev/zero: is not a regular file"), std::string::npos)
      << device.status().ToString();

  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto from_fifo = KernelPack::Load(fifo);  // would block for a writer
  ASSERT_FALSE(from_fifo.ok());
  EXPECT_EQ(from_fifo.status().code(), Status::Code::kInvalidArgument);
}

TEST_F(KernelPackLoadTest, GivenAFileOverTheSizeLimit_LoadShouldRefuseItUnread) {
  const std::string path = Write("{}", "big.json");
  std::filesystem::resize_file(path, (uint64_t{64} << 20) + 1);  // sparse
  auto loaded = KernelPack::Load(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("larger than the limit"), std::string::npos) << loaded.status().ToString();
}

TEST_F(KernelPackLoadTest, GivenInvalidJson_LoadShouldReportTheParseError) {
  auto loaded = LoadText("{\"format\": ");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), Status::Code::kCorruption);
  EXPECT_NE(loaded.status().message().find("parse error at line 1, column 12"), std::string::npos)
      << loaded.status().ToString();
  // A number past a double's range: the JSON library throws another kind of exception than a parse error for it,
  // which aborted the application.
  for (const char* text : {"{\"format\":\"tunefleet-kernel-pack\",\"version\":1,\"x\":-1e400}", "[1e400]"}) {
    auto overflow = LoadText(text);
    ASSERT_FALSE(overflow.ok()) << text;
    EXPECT_EQ(overflow.status().code(), Status::Code::kCorruption) << text;
    EXPECT_NE(overflow.status().message().find("not valid JSON"), std::string::npos) << overflow.status().ToString();
    EXPECT_NE(overflow.status().message().find("number overflow"), std::string::npos) << overflow.status().ToString();
  }
  auto bad_utf8 = LoadText("{\"format\": \"\xff\"}");
  ASSERT_FALSE(bad_utf8.ok());
  EXPECT_NE(bad_utf8.status().message().find("\\xff"), std::string::npos) << bad_utf8.status().ToString();
}

// A key given twice in one object: the JSON library kept the last, so a pack edited to carry a second "count" after
// the first loaded with a value its reader of the text may not see. The same key in two objects is fine (every
// kernel has a "task").
TEST_F(KernelPackLoadTest, GivenAKeyTwiceInOneObject_LoadShouldRefuseItNamingTheKey) {
  nlohmann::json two = GemmPack({GemmPackEntry(8, 8, 8), GemmPackEntry(16, 16, 16)});
  ASSERT_TRUE(LoadText(two.dump()).ok());
  std::string text = Valid().dump();
  const size_t count = text.find("\"count\":");
  ASSERT_NE(count, std::string::npos);
  text.insert(count, "\"count\":1,");
  auto loaded = LoadText(text);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), Status::Code::kCorruption);
  EXPECT_NE(loaded.status().message().find("JSON with the key \"count\" given twice in one object"), std::string::npos)
      << loaded.status().ToString();
}

TEST_F(KernelPackLoadTest, GivenABufferCountThatIsNotAnUnsignedIntegerInRange_LoadShouldRefuseIt) {
  const std::string field = "kernels[0] (gemm:8,8,8:float32): program.buffers[2].count";
  ExpectCorrupt([](auto& p) { Program(p)["buffers"][2]["count"] = -1; }, {field, "got -1"});
  ExpectCorrupt([](auto& p) { Program(p)["buffers"][2]["count"] = uint64_t{1} << 40; }, {field});
  ExpectCorrupt([](auto& p) { Program(p)["buffers"][2]["count"] = 1e300; }, {field});
  ExpectCorrupt([](auto& p) { Program(p)["buffers"][2]["count"] = 3.7; }, {field, "got 3.7"});
  ExpectCorrupt([](auto& p) { Program(p)["buffers"][2]["count"] = "64"; }, {field});
}

TEST_F(KernelPackLoadTest, GivenAnInputBufferWhoseByteSizeWouldWrap_LoadShouldRefuseIt) {
  // 2^62 floats: count * 4 wraps to 0, which passed Run's size check on any application buffer.
  ExpectCorrupt([](auto& p) { Program(p)["buffers"][0]["count"] = uint64_t{1} << 62; }, {"program.buffers[0].count"});
}

TEST_F(KernelPackLoadTest, GivenALocalSizeOfAnotherRank_LoadShouldRefuseIt) {
  ExpectCorrupt([](auto& p) { Launch(p)["local_size"] = {8}; },
                {"program.launches[1].local_size", "as many dimensions as global_size (2), got 1"});
  ExpectCorrupt([](auto& p) { Launch(p)["local_size"] = {8, 8, 1}; }, {"program.launches[1].local_size"});
}

TEST_F(KernelPackLoadTest, GivenAnInvalidGlobalOrLocalSize_LoadShouldRefuseIt) {
  ExpectCorrupt([](auto& p) { Launch(p)["global_size"] = nlohmann::json::array(); }, {"1 to 3 dimensions, got 0"});
  ExpectCorrupt([](auto& p) { Launch(p)["global_size"] = 8; }, {"global_size: must be an array"});
  ExpectCorrupt([](auto& p) { Launch(p)["global_size"] = {8, 8, 1, 1}; }, {"1 to 3 dimensions, got 4"});
  ExpectCorrupt([](auto& p) { Launch(p)["global_size"] = {-1, 8}; }, {"global_size[0]", "got -1"});
  ExpectCorrupt([](auto& p) { Launch(p)["global_size"] = {0, 8}; }, {"global_size[0]", "got 0"});
  ExpectCorrupt([](auto& p) { Launch(p)["global_size"] = {(uint64_t{1} << 32) + 1, 8}; }, {"global_size[0]"});
  ExpectCorrupt(
      [](auto& p) {
        Launch(p)["global_size"] = {uint64_t{1} << 32, uint64_t{1} << 32, 2};
        Launch(p)["local_size"] = nlohmann::json::array();
      },
      {"global_size: the number of work-items overflows"});
  ExpectCorrupt([](auto& p) { Launch(p)["local_size"] = {3, 8}; }, {"local_size[0]: 3 does not divide"});
  ExpectCorrupt([](auto& p) { Launch(p)["local_size"] = {0, 8}; }, {"local_size[0]"});
  ExpectCorrupt([](auto& p) { Launch(p)["local_size"] = {16, 8}; }, {"local_size[0]"});
}

TEST_F(KernelPackLoadTest, GivenDuplicateNamesOrArgumentsNamingTheWrongMemory_LoadShouldRefuseThem) {
  const nlohmann::json image = {{"name", "I"}, {"type", "float32"}, {"width", 4}, {"height", 4}};
  ExpectCorrupt(
      [](auto& p) {
        Program(p)["buffers"].push_back({{"name", "Bt"}, {"type", "float32"}, {"count", 1}, {"init", "zeros"}});
      },
      {"program.buffers[4].name", "\"Bt\" names another buffer or image"});
  ExpectCorrupt(
      [](auto& p) {
        Program(p)["images"] = {{{"name", "Bt"}, {"type", "float32"}, {"width", 4}, {"height", 4}}};
      },
      {"program.images[0].name"});
  ExpectCorrupt(
      [&](auto& p) {
        Program(p)["images"] = {image};
        Arg(p, 2) = {{"buffer", "I"}};
      },
      {"args[2].buffer", "\"I\" is not a buffer"});
  ExpectCorrupt([](auto& p) { Arg(p, 2) = {{"image", "C"}}; }, {"args[2].image", "\"C\" is not an image"});
  ExpectCorrupt([](auto& p) { Arg(p, 0) = {{"buffer", "ZZZ"}}; }, {"args[0].buffer", "names no buffer"});
}

TEST_F(KernelPackLoadTest, GivenAScalarOutOfItsRange_LoadShouldRefuseIt) {
  ExpectCorrupt([](auto& p) { Arg(p, 3) = {{"i32", int64_t{1} << 40}}; }, {"args[3].i32"});
  ExpectCorrupt(
      [](auto& p) {
        Arg(p, 3) = {{"i32", int64_t{std::numeric_limits<int32_t>::min()} - 1}};
      },
      {"args[3].i32"});
  ExpectCorrupt([](auto& p) { Arg(p, 3) = {{"i32", 1e300}}; }, {"args[3].i32"});
  ExpectCorrupt([](auto& p) { Arg(p, 3) = {{"f32", 1e300}}; }, {"args[3].f32", "finite number"});
  ExpectCorrupt([](auto& p) { Arg(p, 3) = {{"local_bytes", 0}}; }, {"args[3].local_bytes"});
  ExpectCorrupt([](auto& p) { p["kernels"][0]["template_version"] = 1e300; }, {"template_version"});
  ExpectCorrupt([](auto& p) { p["kernels"][0]["record_id"] = 1e300; }, {"record_id"});
  ExpectCorrupt([](auto& p) { p["kernels"][0]["record_id"] = std::numeric_limits<uint64_t>::max(); }, {"record_id"});
}

TEST_F(KernelPackLoadTest, GivenAnUnknownEnumValue_LoadShouldRefuseIt) {
  ExpectCorrupt([](auto& p) { Program(p)["buffers"][2]["type"] = "float64"; }, {"buffers[2].type", "\"float64\""});
  ExpectCorrupt([](auto& p) { Program(p)["buffers"][0]["init"] = "randm"; }, {"buffers[0].init", "\"randm\""});
  ExpectCorrupt([](auto& p) { Program(p)["launches"][0]["phase"] = "setpu"; }, {"launches[0].phase"});
  ExpectCorrupt(
      [](auto& p) {
        Program(p)["images"] = {{{"name", "I"}, {"type", "int32"}, {"width", 4}, {"height", 4}}};
      },
      {"images[0].type", "\"int32\""});
}

TEST_F(KernelPackLoadTest, GivenAnOutputBufferNamingNoBuffer_LoadShouldRefuseIt) {
  ExpectCorrupt([](auto& p) { Program(p)["output_buffer"] = "nothing"; }, {"program.output_buffer"});
  ExpectCorrupt(
      [](auto& p) {
        Program(p)["images"] = {{{"name", "I"}, {"type", "float32"}, {"width", 4}, {"height", 4}}};
        Program(p)["output_buffer"] = "I";
      },
      {"program.output_buffer", "is not a buffer"});
}

TEST_F(KernelPackLoadTest, GivenAnEntryDisagreeingWithItsTaskOrAMalformedTask_LoadShouldRefuseIt) {
  ExpectCorrupt([](auto& p) { p["kernels"][0]["op"] = "conv2d"; }, {"kernels[0] (gemm:8,8,8:float32): op"});
  ExpectCorrupt([](auto& p) { p["kernels"][0]["precision"] = "float16"; }, {"precision", "disagrees"});
  for (const char* task : {":::,,,=:", "gemm:nan,8,8:float32", "gemm:8,8,8", "gemm:8,,8:float32", "gemm:8,8,:float32",
                           "gemm::float32", "gemm:8,8,8:float64", "gemm:batch=2,8:float32", "gemm:8,-8,8:float32",
                           "gemm:08,8,8:float32", "gemm:8,8,8,batch=02:float32"}) {
    ExpectCorrupt([&](auto& p) { p["kernels"][0]["task"] = task; }, {"kernels[0]: task: must be a task spec"});
  }
  nlohmann::json extras = Valid();
  extras["kernels"][0]["task"] = "gemm:8,8,8,batch=2,act=relu:float32";
  EXPECT_TRUE(LoadText(extras.dump()).ok());
}

TEST(PackSpecTest, GivenANamedValueThatIsNotACanonicalInteger_TheErrorShouldSayWhy) {
  Result<SpecParts> zero = ParseTaskSpec("gemm:8,8,8,batch=02:float32");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("'batch' is not an integer as the tuner writes it (a leading zero)"),
            std::string::npos)
      << zero.status().message();
  Result<SpecParts> mixed = ParseTaskSpec("gemm:8,8,8,k=3x3:float32");
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("'k' is not an integer as the tuner writes it"), std::string::npos)
      << mixed.status().message();
  EXPECT_EQ(mixed.status().message().find("leading zero"), std::string::npos) << mixed.status().message();
}

TEST_F(KernelPackLoadTest, GivenEntriesNotInAnArrayOrNamesWithNul_LoadShouldRefuseThem) {
  ExpectCorrupt([](auto& p) { p["kernels"] = {{"x", p["kernels"][0]}}; }, {"kernels: must be an array, got object"});
  ExpectCorrupt([](auto& p) { p["fallbacks"] = {{"x", p["kernels"][0]}}; }, {"fallbacks: must be an array"});
  ExpectCorrupt([](auto& p) { Launch(p)["entry"] = std::string("gemm\0evil", 9); }, {"launches[1].entry", "NUL"});
  ExpectCorrupt([](auto& p) { Launch(p)["entry"] = "gemm(x)"; }, {"launches[1].entry", "kernel name"});
  ExpectCorrupt([](auto& p) { Launch(p)["build_options"] = std::string("-DA=1\0-DB", 9); }, {"build_options"});
}

}  // namespace
}  // namespace tunefleet::runtime

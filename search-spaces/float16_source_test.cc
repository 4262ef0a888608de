// float16 (half arithmetic) kernels are generated for devices with cl_khr_fp16, which the tests' device (Debian's
// PoCL) lacks, so there the float16 device tests skip (bench/fp16_cpu.sh runs them on Intel's CPU runtime).
// This test checks what can be checked on every machine: every template's float16 candidates and references
// are valid OpenCL C with cl_khr_fp16, compiled by clang for the SPIR target (clang is the front end of most
// OpenCL drivers, PoCL's included). The same sources with the extension pragma removed must fail, which shows
// the check looks at the half code.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "search-spaces/conv_common_testing.h"
#include "search-spaces/template.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

// The clang binary: $TUNEFLEET_CLANG, else the first of clang, clang-15, clang-14 on PATH.
std::string FindClang() {
  if (const char* env = std::getenv("TUNEFLEET_CLANG")) return env;
  for (const char* name : {"clang", "clang-15", "clang-14"}) {
    if (std::system((std::string("command -v ") + name + " >/dev/null 2>&1").c_str()) == 0) return name;
  }
  return {};
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tf-fp16-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Compiles `source` as OpenCL C 1.2 for spir64 with cl_khr_fp16; returns "" on success, else clang's output.
std::string Compile(const std::string& clang, const fs::path& dir, const std::string& source) {
  const fs::path cl = dir / "kernel.cl";
  const fs::path log = dir / "clang.log";
  std::ofstream(cl) << source;
  const std::string cmd = clang + " -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target spir64 " +
                          "-Xclang -cl-ext=+cl_khr_fp16 -fsyntax-only -Werror=implicit-function-declaration " +
                          cl.string() + " >" + log.string() + " 2>&1";
  if (std::system(cmd.c_str()) == 0) return {};
  std::ifstream in(log);
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return out.empty() ? "clang failed" : out.substr(0, 2000);
}

// Every distinct kernel source of a program and of its reference.
std::set<std::string> Sources(const proto::KernelProgram& p) {
  std::set<std::string> s;
  for (const auto& l : p.launches()) s.insert(l.source());
  if (p.has_reference())
    for (const auto& l : p.reference().launches()) s.insert(l.source());
  return s;
}

struct Case {
  const char* tmpl;
  const char* spec;
};

const Case kCases[] = {
    {"gemm.buffer", "gemm:48,32,40,bias=1,act=relu:float16"},
    {"gemm.buffer", "gemm:33,20,17,transb=1,batch=2:float16"},
    {"conv2d_nchw.buffer", "conv2d:1,5,9,9,6,3,3,2,1,bias=1,relu=1:float16"},
    {"conv2d_1x1.buffer", "conv2d:2,12,9,10,8,1,1,2,1,bias=1,relu=1:float16"},
    {"conv2d_nchwc.image2d", "conv2d:1,5,9,9,6,3,3,2,1,bias=1,relu=1:float16"},
    {"depthwise_conv2d_nchwc.image2d", "dwconv2d:1,5,9,9,3,3,2,1,bias=1,relu=1:float16"},
    {"conv2d_winograd", "conv2d:1,5,9,9,6,3,3,1,1,bias=1,relu=1:float16"},
    {"pool.worksize", "pool:1,3,9,11,3,3,2,1,mode=avg:float16"},
    {"eltwise.worksize", "elementwise:1,3,7,9,kind=add:float16"},
};

TEST(Float16Source, GivenEveryTemplateItsFloat16CandidatesAndReferenceShouldCompileAsOpenClWithFp16) {
  const std::string clang = FindClang();
  ASSERT_FALSE(clang.empty()) << "no clang on PATH (scripts/install-deps.sh installs it); set TUNEFLEET_CLANG";
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const DeviceLimits lim = testing::GpuLikeLimits();  // images and fp16
  for (const Case& c : kCases) {
    const Template* t = FindTemplate(c.tmpl);
    ASSERT_NE(t, nullptr) << c.tmpl;
    const Task task = testing::ParseTask(c.spec);
    Result<Space> space = t->MakeSpace(task, lim);
    ASSERT_TRUE(space.ok()) << c.spec << ": " << space.status().ToString();
    std::vector<Config> configs = testing::SampleConfigs(*space, 3, 17);
    configs.push_back(t->Fallback(task, *space));
    std::set<std::string> sources;
    for (const Config& cfg : configs) {
      Result<proto::KernelProgram> p = t->Generate(task, *space, cfg);
      ASSERT_TRUE(p.ok()) << c.spec << ": " << p.status().ToString();
      for (const std::string& s : Sources(*p)) sources.insert(s);
    }
    for (const std::string& s : sources) {
      EXPECT_EQ(Compile(clang, dir.path(), s), "") << c.tmpl << " " << c.spec << "\n" << s.substr(0, 600);
    }
  }
}

TEST(Float16Source, GivenAFloat16KernelWithoutTheExtensionPragmaClangShouldRejectIt) {
  const std::string clang = FindClang();
  ASSERT_FALSE(clang.empty()) << "no clang on PATH (scripts/install-deps.sh installs it); set TUNEFLEET_CLANG";
  TempDir dir;
  const Template* t = FindTemplate("conv2d_nchw.buffer");
  ASSERT_NE(t, nullptr);
  const Task task = testing::ParseTask("conv2d:1,5,9,9,6,3,3,2,1:float16");
  Result<Space> space = t->MakeSpace(task, testing::GpuLikeLimits());
  ASSERT_TRUE(space.ok());
  Result<proto::KernelProgram> p = t->Generate(task, *space, t->Fallback(task, *space));
  ASSERT_TRUE(p.ok());
  std::string source = p->launches(0).source();
  const std::string pragma = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";
  const size_t at = source.find(pragma);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(Compile(clang, dir.path(), source), "");
  source.erase(at, pragma.size());
  EXPECT_NE(Compile(clang, dir.path(), source), "");
}

}  // namespace
}  // namespace tunefleet

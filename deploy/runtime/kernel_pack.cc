#include "deploy/runtime/kernel_pack.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

namespace tunefleet::runtime {
namespace {

constexpr const char* kFormat = "tunefleet-kernel-pack";
constexpr int kVersion = 1;

// A workload spec split into its parts; positional values as written.
struct SpecParts {
  std::string op;
  std::vector<double> sizes;
  std::map<std::string, std::string> extras;
  std::string precision;
};

SpecParts SplitSpec(const std::string& spec) {
  SpecParts p;
  size_t a = spec.find(':');
  p.op = spec.substr(0, a);
  if (a == std::string::npos) return p;
  size_t b = spec.find(':', a + 1);
  std::string params = spec.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
  p.precision = b == std::string::npos ? "float32" : spec.substr(b + 1);
  std::istringstream in(params);
  std::string tok;
  while (std::getline(in, tok, ',')) {
    if (auto eq = tok.find('='); eq != std::string::npos) {
      p.extras[tok.substr(0, eq)] = tok.substr(eq + 1);
    } else {
      p.sizes.push_back(std::strtod(tok.c_str(), nullptr));
    }
  }
  return p;
}

// Distance between workloads of one op: sum of |log(a/b)| over positional sizes; infinite when the shapes
// of the specs differ (count of sizes, named extras).
double Distance(const SpecParts& a, const SpecParts& b) {
  if (a.sizes.size() != b.sizes.size() || a.extras != b.extras) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (size_t i = 0; i < a.sizes.size(); ++i) {
    d += std::fabs(std::log((a.sizes[i] + 1) / (b.sizes[i] + 1)));
  }
  return d;
}

ElemType ParseType(const std::string& s) {
  if (s == "float16") return ElemType::kFloat16;
  if (s == "int32") return ElemType::kInt32;
  return ElemType::kFloat32;
}

std::vector<uint64_t> Sizes(const nlohmann::json& j) {
  std::vector<uint64_t> out;
  if (j.is_array())
    for (const auto& v : j) out.push_back(v.get<uint64_t>());
  return out;
}

// Throws nlohmann::json::exception on a malformed document; Parse turns that into a Status.
PackProgram ParseProgram(const nlohmann::json& j) {
  PackProgram p;
  for (const auto& b : j.value("buffers", nlohmann::json::array())) {
    p.buffers.push_back({b.at("name").get<std::string>(), ParseType(b.value("type", "float32")),
                         b.at("count").get<uint64_t>(), b.value("init", "zeros") == "random"});
  }
  for (const auto& im : j.value("images", nlohmann::json::array())) {
    p.images.push_back({im.at("name").get<std::string>(), ParseType(im.value("type", "float32")),
                        im.at("width").get<uint64_t>(), im.at("height").get<uint64_t>()});
  }
  for (const auto& l : j.at("launches")) {
    PackLaunch launch;
    launch.setup = l.value("phase", "timed") == "setup";
    launch.entry = l.at("entry").get<std::string>();
    launch.source = l.at("source").get<std::string>();
    launch.build_options = l.value("build_options", "");
    for (const auto& a : l.value("args", nlohmann::json::array())) {
      PackArg arg;
      if (a.contains("buffer")) {
        arg.kind = PackArg::Kind::kBuffer;
        arg.name = a["buffer"].get<std::string>();
      } else if (a.contains("image")) {
        arg.kind = PackArg::Kind::kImage;
        arg.name = a["image"].get<std::string>();
      } else if (a.contains("i32")) {
        arg.kind = PackArg::Kind::kI32;
        arg.i32 = a["i32"].get<int32_t>();
      } else if (a.contains("f32")) {
        arg.kind = PackArg::Kind::kF32;
        arg.f32 = a["f32"].get<float>();
      } else if (a.contains("local_bytes")) {
        arg.kind = PackArg::Kind::kLocalBytes;
        arg.local_bytes = a["local_bytes"].get<uint64_t>();
      } else {
        throw std::invalid_argument("kernel argument " + a.dump() + " has no known kind");
      }
      launch.args.push_back(std::move(arg));
    }
    launch.global_size = Sizes(l.at("global_size"));
    launch.local_size = Sizes(l.value("local_size", nlohmann::json::array()));
    p.launches.push_back(std::move(launch));
  }
  p.output_buffer = j.value("output_buffer", "");
  return p;
}

PackedKernel ParseEntry(const nlohmann::json& e, bool fallback) {
  PackedKernel k;
  k.task = e.at("task").get<std::string>();
  SpecParts parts = SplitSpec(k.task);
  k.op = e.value("op", parts.op);
  k.precision = e.value("precision", parts.precision);
  k.template_name = e.at("template").get<std::string>();
  k.template_version = e.value("template_version", 0);
  k.config = e.value("config", nlohmann::json::object()).dump();
  k.record_id = e.value("record_id", int64_t{0});
  k.latency_ms = e.value("latency_ms", 0.0);
  k.gflops = e.value("gflops", 0.0);
  k.fallback = fallback;
  k.program = ParseProgram(e.at("program"));
  return k;
}

}  // namespace

size_t ElemBytes(ElemType t) { return t == ElemType::kFloat16 ? 2 : 4; }

const char* MatchKindName(MatchKind k) {
  switch (k) {
    case MatchKind::kExact: return "exact";
    case MatchKind::kNearest: return "nearest";
    case MatchKind::kFallback: return "fallback";
  }
  return "?";
}

const PackBuffer* PackProgram::FindBuffer(const std::string& name) const {
  for (const auto& b : buffers)
    if (b.name == name) return &b;
  return nullptr;
}

Result<KernelPack> KernelPack::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open kernel pack");
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

Result<KernelPack> KernelPack::Parse(const std::string& json_text, const std::string& source) {
  auto j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption(source + ": not a JSON object");
  if (j.value("format", "") != kFormat) return Status::InvalidArgument(source + ": not a tunefleet kernel pack");
  if (j.value("version", 0) != kVersion) {
    return Status::InvalidArgument(source + ": kernel pack version " + std::to_string(j.value("version", 0)) +
                                   " is not supported (expected " + std::to_string(kVersion) + ")");
  }
  KernelPack pack;
  try {
    const auto& d = j.at("device");
    pack.device_ = {d.value("name", ""), d.value("vendor", ""), d.value("driver", ""), d.value("opencl_version", ""),
                    d.value("fingerprint", "")};
    for (const auto& e : j.value("kernels", nlohmann::json::array())) pack.kernels_.push_back(ParseEntry(e, false));
    for (const auto& e : j.value("fallbacks", nlohmann::json::array())) pack.fallbacks_.push_back(ParseEntry(e, true));
  } catch (const std::exception& e) {
    return Status::Corruption(source + ": malformed kernel pack: " + e.what());
  }
  return pack;
}

Result<PackMatch> KernelPack::Find(const std::string& task_spec) const {
  SpecParts want = SplitSpec(task_spec);
  const PackedKernel* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& k : kernels_) {
    if (k.op != want.op || k.precision != want.precision) continue;
    SpecParts have = SplitSpec(k.task);
    if (have.sizes == want.sizes && have.extras == want.extras) return PackMatch{&k, MatchKind::kExact};
    double d = Distance(want, have);
    if (d < best) {
      best = d;
      nearest = &k;
    }
  }
  if (nearest) return PackMatch{nearest, MatchKind::kNearest};
  for (const auto& k : fallbacks_) {
    if (k.op == want.op && k.precision == want.precision) return PackMatch{&k, MatchKind::kFallback};
  }
  return Status::NotFound("kernel pack has no " + want.op + " kernel for " + want.precision + " (" + task_spec + ")");
}

}  // namespace tunefleet::runtime

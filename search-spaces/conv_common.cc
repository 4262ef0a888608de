#include "search-spaces/conv_common.h"

#include <cmath>
#include <optional>
#include <random>
#include <sstream>

#include "search-spaces/op_signature.h"

namespace tunefleet {
namespace {

constexpr uint64_t kDataSeed = 1;
constexpr uint64_t kWeightSeed = 2;
constexpr uint64_t kBiasSeed = 3;

Status Bad(const Task& task, const std::string& what) {
  return Status::InvalidArgument(task.ToSpec() + ": " + what);
}

}  // namespace

std::string ActivationStatement(Activation a, const std::string& var) {
  if (a == Activation::kNone) return "";
  return "  " + var + " = " + ActivationExpr(a, var) + ";\n";
}

bool IsConvOp(const std::string& op) { return op == "conv2d" || op == "dwconv2d"; }

Result<ConvShape> ConvShapeFromTask(const Task& task) {
  if (!IsConvOp(task.op)) return Bad(task, "not a convolution task (op '" + task.op + "')");
  const bool dw = task.op == "dwconv2d";
  for (const char* p : {"N", "C", "H", "W", "KH", "KW", "stride", "pad"}) {
    if (!task.Has(p)) return Bad(task, std::string("missing parameter '") + p + "'");
  }
  if (!dw && !task.Has("K")) return Bad(task, "missing parameter 'K'");
  ConvShape s;
  s.n = task.Get("N");
  s.c = task.Get("C");
  s.h = task.Get("H");
  s.w = task.Get("W");
  s.kh = task.Get("KH");
  s.kw = task.Get("KW");
  s.stride = task.Get("stride", 1);
  s.pad = task.Get("pad", 0);
  s.dilation = task.Get("dilation", 1);
  s.bias = task.Get("bias", 0) != 0;
  s.act = static_cast<Activation>(task.Get("act", 0));
  if (task.Get("relu", 0) != 0) {
    // relu=1 is the older spelling of act=relu: with another act it was taken over it without a word.
    if (s.act != Activation::kNone && s.act != Activation::kRelu) {
      return Bad(task, std::string("relu=1 contradicts act=") + ActivationName(s.act) + ": give one of them");
    }
    s.act = Activation::kRelu;
  }
  if (dw) {
    s.k = s.c * task.Get("multiplier", 1);
    s.groups = s.c;
  } else {
    s.k = task.Get("K");
    s.groups = task.Get("groups", 1);
  }
  if (s.n <= 0 || s.c <= 0 || s.h <= 0 || s.w <= 0 || s.k <= 0 || s.kh <= 0 || s.kw <= 0) {
    return Bad(task, "sizes must be positive");
  }
  if (s.stride <= 0 || s.dilation <= 0 || s.pad < 0 || s.groups <= 0) {
    return Bad(task, "stride and dilation must be positive, pad non-negative, groups positive");
  }
  // Task::Parse bounds what a spec says; a task made from a model's attributes is bounded here, before the sums
  // below, which overflowed with a pad or input of 2^62.
  for (int64_t v : {s.n, s.c, s.h, s.w, s.k, s.kh, s.kw, s.stride, s.pad, s.dilation, s.groups}) {
    if (v > kMaxTaskSize)
      return Bad(task, "a size, stride, pad or dilation is larger than " + std::to_string(kMaxTaskSize));
  }
  if (s.c % s.groups != 0 || s.k % s.groups != 0) return Bad(task, "channels are not divisible by groups");
  // Compared directly: oh()'s division truncates toward zero, so with a stride above 1 a kernel larger than the
  // padded input still gave an output of 1 (a 4x4 kernel over a 3x3 input at stride 2).
  if (s.h + 2 * s.pad < s.dilation * (s.kh - 1) + 1 || s.w + 2 * s.pad < s.dilation * (s.kw - 1) + 1) {
    return Bad(task, "the kernel is larger than the padded input");
  }
  return s;
}

proto::ElemType StorageType(Precision p) {
  return p == Precision::kFloat32 ? proto::FLOAT32 : proto::FLOAT16;
}
const char* StorageCType(Precision p) { return p == Precision::kFloat32 ? "float" : "half"; }
const char* AccumCType(Precision p) { return p == Precision::kFloat16 ? "half" : "float"; }
bool NeedsFp16(Precision p) { return p == Precision::kFloat16; }

std::string TypePreamble(Precision p) {
  std::string s;
  if (NeedsFp16(p)) s += "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";
  s += std::string("#define T ") + StorageCType(p) + "\n";
  s += std::string("#define ACC ") + AccumCType(p) + "\n";
  s += "#define LT ACC\n";
  if (p == Precision::kFloat16Acc32) {
    s += "#define LD(p, i) vload_half((i), (p))\n#define ST(p, i, v) vstore_half_rte((float)(v), (i), (p))\n";
  } else {
    s += "#define LD(p, i) ((p)[i])\n#define ST(p, i, v) ((p)[i] = (T)(v))\n";
  }
  return s;
}

bool PrecisionSupported(Precision p, const DeviceLimits& limits, std::string* why) {
  if (NeedsFp16(p) && !limits.fp16) {
    if (why) *why = "device has no cl_khr_fp16";
    return false;
  }
  return true;
}

void SetTolerance(Precision p, int64_t reduce, proto::KernelProgram* program) {
  // Inputs are uniform in [-1, 1): a sum of `reduce` products has magnitude ~sqrt(reduce); rounding error
  // grows with it. half has an 11-bit mantissa, so its bound is wider.
  const double scale = std::max(1.0, std::sqrt(static_cast<double>(reduce)));
  switch (p) {
    case Precision::kFloat32:
      program->set_rtol(1e-3f);
      program->set_atol(static_cast<float>(1e-4 * scale));
      break;
    case Precision::kFloat16Acc32:
      program->set_rtol(1e-2f);
      program->set_atol(static_cast<float>(4e-3 * scale));
      break;
    case Precision::kFloat16:
      program->set_rtol(3e-2f);
      program->set_atol(static_cast<float>(2e-2 * scale));
      break;
  }
}

void AddRandomBuffer(const std::string& name, Precision p, int64_t count, uint64_t seed,
                     proto::KernelProgram* program) {
  auto* b = program->add_buffers();
  b->set_name(name);
  b->set_type(StorageType(p));
  b->set_count(static_cast<uint64_t>(count));
  b->set_init(proto::BufferSpec::RANDOM);
  b->set_seed(seed);
  b->set_lo(-1.0f);
  b->set_hi(1.0f);
}

void AddZeroBuffer(const std::string& name, proto::ElemType type, int64_t count, proto::KernelProgram* program) {
  auto* b = program->add_buffers();
  b->set_name(name);
  b->set_type(type);
  b->set_count(static_cast<uint64_t>(count));
  b->set_init(proto::BufferSpec::ZEROS);
}

void AddOutputBuffer(const std::string& name, proto::ElemType type, int64_t count, proto::KernelProgram* program) {
  AddZeroBuffer(name, type, count, program);
  program->mutable_buffers(program->buffers_size() - 1)->set_init(proto::BufferSpec::NANS);
  program->set_output_buffer(name);
}

proto::KernelLaunch* AddLaunch(proto::KernelProgram* program, std::string source, std::string entry,
                               proto::KernelLaunch::Phase phase, std::vector<uint64_t> global,
                               std::vector<uint64_t> local) {
  auto* l = program->add_launches();
  l->set_source(std::move(source));
  l->set_entry(std::move(entry));
  l->set_phase(phase);
  for (uint64_t g : global) l->add_global_size(g);
  for (uint64_t v : local) l->add_local_size(v);
  return l;
}

void ArgBuffer(proto::KernelLaunch* launch, const std::string& name) { launch->add_args()->set_buffer(name); }
void ArgImage(proto::KernelLaunch* launch, const std::string& name) { launch->add_args()->set_image(name); }

std::vector<std::vector<int64_t>> FactorSplits(int64_t extent, int parts,
                                               const std::function<bool(const std::vector<int64_t>&)>& keep) {
  std::vector<std::vector<int64_t>> all;
  std::vector<int64_t> cur;
  if (extent <= 0 || parts <= 0) return all;
  // Build from the innermost factor outwards: cur holds the inner factors chosen so far.
  std::function<void(int64_t, int)> rec = [&](int64_t rest, int left) {
    if (left == 1) {
      std::vector<int64_t> f;
      f.push_back(rest);
      f.insert(f.end(), cur.begin(), cur.end());
      if (!keep || keep(f)) all.push_back(std::move(f));
      return;
    }
    for (int64_t d = 1; d <= rest; ++d) {
      if (rest % d != 0) continue;
      cur.insert(cur.begin(), d);
      rec(rest / d, left - 1);
      cur.erase(cur.begin());
    }
  };
  rec(extent, parts);
  return all;
}

Knob SplitKnob(const std::string& name, int64_t extent, int parts,
               const std::function<bool(const std::vector<int64_t>&)>& keep) {
  Knob k;
  k.name = name;
  k.kind = KnobKind::kSplit;
  k.choices = FactorSplits(extent, parts, keep);
  return k;
}

Config PickByScore(const Space& space, const std::function<double(const ConfigView&)>& score, int samples) {
  std::mt19937_64 rng(20240601);
  std::optional<uint64_t> best;
  double best_score = 0;
  for (int i = 0; i < samples; ++i) {
    std::optional<uint64_t> idx = space.SampleValid(rng, 20000);
    if (!idx) break;
    const Config c = space.FromIndex(*idx);
    const double sc = score(ConfigView(space, c));
    if (!best || sc > best_score || (sc == best_score && *idx < *best)) {
      best = idx;
      best_score = sc;
    }
  }
  return space.FromIndex(best.value_or(0));
}

void AddLocalSizeKnob(const DeviceLimits& limits, Space* space) {
  space->AddList("local_size", {0, 16, 32, 64, 128, 256, 512, 1024});
  const DeviceLimits lim = limits;
  space->AddConstraint("work-group", [lim](const ConfigView& v) {
    const int64_t l = v.Value("local_size");
    return l == 0 ? std::string() : lim.CheckWorkGroup({static_cast<uint64_t>(l)});
  });
}

std::vector<uint64_t> LocalSizeOf(int64_t local_size) {
  if (local_size <= 0) return {};
  return {static_cast<uint64_t>(local_size)};
}

uint64_t GlobalSizeFor(int64_t items, int64_t local_size) {
  return RoundUp(static_cast<uint64_t>(items), static_cast<uint64_t>(local_size > 0 ? local_size : 1));
}

proto::KernelProgram ConvReference(const Task& task) {
  Result<ConvShape> s = ConvShapeFromTask(task);
  return s.ok() ? ReferenceConv(*s, task.precision) : proto::KernelProgram();
}

double ConvFlops(const Task& task) {
  Result<ConvShape> s = ConvShapeFromTask(task);
  return s.ok() ? s->Flops() : 0.0;
}

void AddConvBuffers(const ConvShape& s, Precision p, proto::KernelProgram* program) {
  AddRandomBuffer("data", p, s.input_count(), kDataSeed, program);
  AddRandomBuffer("weight", p, s.weight_count(), kWeightSeed, program);
  if (s.bias) AddRandomBuffer("bias", p, s.k, kBiasSeed, program);
  AddOutputBuffer("out", StorageType(p), s.output_count(), program);
}

proto::KernelProgram ReferenceConv(const ConvShape& s, Precision p) {
  proto::KernelProgram prog;
  AddConvBuffers(s, p, &prog);
  std::ostringstream src;
  src << TypePreamble(p);
  src << "__kernel void ref_conv2d(__global const T* data, __global const T* weight, __global const T* bias,\n"
         "                         __global T* out) {\n"
      << "  const long i = get_global_id(0);\n"
      << "  const int OW = " << s.ow() << ", OH = " << s.oh() << ", K = " << s.k << ";\n"
      << "  const int C = " << s.c << ", H = " << s.h << ", W = " << s.w << ";\n"
      << "  const int CG = " << s.c_per_group() << ", KG = " << s.k_per_group() << ";\n"
      << "  const int KH = " << s.kh << ", KW = " << s.kw << ", S = " << s.stride << ", P = " << s.pad
      << ", D = " << s.dilation << ";\n"
      << "  if (i >= (long)" << s.output_count() << ") return;\n"
      << "  const int x = i % OW, y = (i / OW) % OH, k = (i / ((long)OW * OH)) % K;\n"
      << "  const int n = i / ((long)OW * OH * K);\n"
      << "  const int c0 = (k / KG) * CG;\n"
      << "  float acc = 0.0f;\n"
      << "  for (int c = 0; c < CG; ++c)\n"
      << "    for (int r = 0; r < KH; ++r) {\n"
      << "      const int iy = y * S - P + r * D;\n"
      << "      if (iy < 0 || iy >= H) continue;\n"
      << "      for (int q = 0; q < KW; ++q) {\n"
      << "        const int ix = x * S - P + q * D;\n"
      << "        if (ix < 0 || ix >= W) continue;\n"
      << "        acc += (float)LD(data, (((long)n * C + c0 + c) * H + iy) * W + ix) *\n"
      << "               (float)LD(weight, (((long)k * CG + c) * KH + r) * KW + q);\n"
      << "      }\n"
      << "    }\n";
  if (s.bias) src << "  acc += (float)LD(bias, k);\n";
  src << ActivationStatement(s.act, "acc");
  src << "  ST(out, i, acc);\n}\n";
  auto* l = AddLaunch(&prog, src.str(), "ref_conv2d", proto::KernelLaunch::TIMED,
                      {RoundUp(static_cast<uint64_t>(s.output_count()), 64)}, {});
  ArgBuffer(l, "data");
  ArgBuffer(l, "weight");
  ArgBuffer(l, s.bias ? "bias" : "weight");  // unused when there is no bias
  ArgBuffer(l, "out");
  SetTolerance(p, s.reduce_size(), &prog);
  return prog;
}

}  // namespace tunefleet

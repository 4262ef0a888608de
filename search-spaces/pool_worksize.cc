#include "search-spaces/pool_worksize.h"

#include <sstream>

#include "search-spaces/conv_common.h"

namespace tunefleet {
namespace {

constexpr uint64_t kDataSeed = 1;

struct PoolShape {
  int64_t n, c, h, w, kh, kw, stride, pad;
  bool avg, global;
  int64_t oh() const { return global ? 1 : (h + 2 * pad - kh) / stride + 1; }
  int64_t ow() const { return global ? 1 : (w + 2 * pad - kw) / stride + 1; }
  int64_t outputs() const { return n * c * oh() * ow(); }
  int64_t window() const { return global ? h * w : kh * kw; }
};

Result<PoolShape> Shape(const Task& task) {
  if (task.op != "pool") return Status::InvalidArgument(task.ToSpec() + ": not a pool task");
  PoolShape s{task.Get("N"),      task.Get("C"),   task.Get("H"),          task.Get("W"),
              task.Get("KH", 1),  task.Get("KW", 1), task.Get("stride", 1), task.Get("pad", 0),
              task.Get("mode", 0) == 1, task.Get("global", 0) != 0};
  if (s.n <= 0 || s.c <= 0 || s.h <= 0 || s.w <= 0 || s.kh <= 0 || s.kw <= 0 || s.stride <= 0 || s.pad < 0) {
    return Status::InvalidArgument(task.ToSpec() + ": sizes and stride must be positive, pad non-negative");
  }
  // A window larger than the padded input has no output (C++ division truncates: (8 - 9) / 2 + 1 is 1, not 0).
  if (!s.global && (s.h + 2 * s.pad < s.kh || s.w + 2 * s.pad < s.kw || s.oh() <= 0 || s.ow() <= 0)) {
    return Status::InvalidArgument(task.ToSpec() + ": the window does not fit the padded input");
  }
  // A pad as large as the window makes windows of padding alone, which have no value (ONNX asks pad < window too).
  if (!s.global && (s.pad >= s.kh || s.pad >= s.kw)) {
    return Status::InvalidArgument(task.ToSpec() + ": the pad (" + std::to_string(s.pad) +
                                   ") must be smaller than the window (" + std::to_string(s.kh) + "x" +
                                   std::to_string(s.kw) + ")");
  }
  return s;
}

// The window reduction for output `i` (a long in scope), as statements.
std::string Body(const PoolShape& s) {
  std::ostringstream o;
  o << "  const int OW = " << s.ow() << ", OH = " << s.oh() << ", H = " << s.h << ", W = " << s.w << ";\n"
    << "  const int x = i % OW, y = (i / OW) % OH;\n"
    << "  const __global T* src = data + (i / ((long)OW * OH)) * H * W;\n";
  if (s.global) {
    o << "  const int y0 = 0, x0 = 0, y1 = H, x1 = W;\n";
  } else {
    o << "  const int y0 = max(y * " << s.stride << " - " << s.pad << ", 0), x0 = max(x * " << s.stride << " - "
      << s.pad << ", 0);\n"
      << "  const int y1 = min(y * " << s.stride << " - " << s.pad << " + " << s.kh << ", H), x1 = min(x * "
      << s.stride << " - " << s.pad << " + " << s.kw << ", W);\n";
  }
  o << "  float acc = " << (s.avg ? "0.0f" : "-INFINITY") << ";\n"
    << "  for (int r = y0; r < y1; ++r)\n"
    << "    for (int q = x0; q < x1; ++q) {\n"
    << "      const float v = (float)LD(src, r * W + q);\n"
    << (s.avg ? "      acc += v;\n" : "      acc = fmax(acc, v);\n") << "    }\n";
  if (s.avg) o << "  acc /= (float)((y1 - y0) * (x1 - x0));\n";
  o << "  ST(out, i, acc);\n";
  return o.str();
}

// The candidate (one work-item per output, `local_size` as configured) or, with `reference`, one work-item
// walking every output: trusted and independent of any work-size choice.
proto::KernelProgram Program(const PoolShape& s, Precision p, int64_t local_size, bool reference) {
  proto::KernelProgram prog;
  AddRandomBuffer("data", p, s.n * s.c * s.h * s.w, kDataSeed, &prog);
  AddOutputBuffer("out", StorageType(p), s.outputs(), &prog);
  std::ostringstream o;
  o << TypePreamble(p) << "__kernel void " << (reference ? "pool_ref" : "pool")
    << "(__global const T* data, __global T* out) {\n";
  if (reference) {
    o << "  for (long i = 0; i < " << s.outputs() << "L; ++i) {\n" << Body(s) << "  }\n}\n";
  } else {
    o << "  const long i = get_global_id(0);\n  if (i >= " << s.outputs() << "L) return;\n" << Body(s) << "}\n";
  }
  auto* l = AddLaunch(&prog, o.str(), reference ? "pool_ref" : "pool", proto::KernelLaunch::TIMED,
                      {reference ? 1 : GlobalSizeFor(s.outputs(), local_size)},
                      reference ? std::vector<uint64_t>{1} : LocalSizeOf(local_size));
  ArgBuffer(l, "data");
  ArgBuffer(l, "out");
  SetTolerance(p, 1, &prog);
  return prog;
}

}  // namespace

bool PoolWorksizeTemplate::Supports(const Task& task, const DeviceLimits& limits, std::string* why) const {
  Result<PoolShape> s = Shape(task);
  if (!s.ok()) {
    if (why) *why = s.status().message();
    return false;
  }
  return PrecisionSupported(task.precision, limits, why);
}

Result<Space> PoolWorksizeTemplate::MakeSpace(const Task& task, const DeviceLimits& limits) const {
  std::string why;
  if (!Supports(task, limits, &why)) return Status::InvalidArgument(task.ToSpec() + ": " + why);
  Space space;
  AddLocalSizeKnob(limits, &space);
  return space;
}

Result<proto::KernelProgram> PoolWorksizeTemplate::Generate(const Task& task, const Space& space,
                                                            const Config& c) const {
  TF_ASSIGN_OR_RETURN(PoolShape s, Shape(task));
  if (std::string why = space.Check(c); !why.empty()) return Status::InvalidArgument("invalid config: " + why);
  proto::KernelProgram prog = Program(s, task.precision, ConfigView(space, c).Value("local_size"), false);
  *prog.mutable_reference() = Reference(task);
  return prog;
}

proto::KernelProgram PoolWorksizeTemplate::Reference(const Task& task) const {
  Result<PoolShape> s = Shape(task);
  return s.ok() ? Program(*s, task.precision, 0, true) : proto::KernelProgram();
}

double PoolWorksizeTemplate::Flops(const Task& task) const {
  Result<PoolShape> s = Shape(task);
  return s.ok() ? static_cast<double>(s->outputs()) * static_cast<double>(s->window()) : 0.0;
}

Config PoolWorksizeTemplate::Fallback(const Task&, const Space& space) const {
  return space.FromIndex(0);  // the driver's choice
}

std::vector<float> PoolWorksizeTemplate::DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                                         const DeviceLimits&) const {
  Result<PoolShape> s = Shape(task);
  if (!s.ok()) return {};
  const int64_t l = ConfigView(space, c).Value("local_size");
  return {static_cast<float>(l), static_cast<float>(s->window()),
          static_cast<float>(l > 0 ? CeilDiv(s->outputs(), l) : 0)};
}

double PoolWorksizeTemplate::WorkItems(const Task& task, const Space& space, const Config& c) const {
  Result<PoolShape> s = Shape(task);
  return s.ok() ? static_cast<double>(GlobalSizeFor(s->outputs(), ConfigView(space, c).Value("local_size"))) : 0;
}

std::unique_ptr<Template> NewPoolWorksizeTemplate() { return std::make_unique<PoolWorksizeTemplate>(); }

}  // namespace tunefleet

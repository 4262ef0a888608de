#include "search-spaces/elementwise_worksize.h"

#include <sstream>

#include "search-spaces/conv_common.h"

namespace tunefleet {
namespace {

constexpr uint64_t kSeedA = 1;
constexpr uint64_t kSeedB = 2;

// Kinds in the order of the "elementwise" op signature's symbols.
enum class Kind : int64_t { kAdd = 0, kMul, kSub, kRelu, kRelu6, kSigmoid };
constexpr int64_t kKinds = 6;

bool Binary(Kind k) { return k == Kind::kAdd || k == Kind::kMul || k == Kind::kSub; }

std::string Expr(Kind k) {
  switch (k) {
    case Kind::kAdd: return "a + b";
    case Kind::kMul: return "a * b";
    case Kind::kSub: return "a - b";
    case Kind::kRelu: return "fmax(a, 0.0f)";
    case Kind::kRelu6: return "fmin(fmax(a, 0.0f), 6.0f)";
    case Kind::kSigmoid: return "1.0f / (1.0f + exp(-a))";
  }
  return "a";
}

struct Shape {
  int64_t count;
  Kind kind;
};

Result<Shape> ShapeOf(const Task& task) {
  if (task.op != "elementwise") return Status::InvalidArgument(task.ToSpec() + ": not an elementwise task");
  const int64_t count = task.Get("N") * task.Get("C") * task.Get("H") * task.Get("W");
  const int64_t kind = task.Get("kind", 0);
  if (count <= 0) return Status::InvalidArgument(task.ToSpec() + ": sizes must be positive");
  if (kind < 0 || kind >= kKinds) return Status::InvalidArgument(task.ToSpec() + ": unknown kind");
  return Shape{count, static_cast<Kind>(kind)};
}

proto::KernelProgram Program(const Shape& s, Precision p, int64_t local_size, bool reference) {
  proto::KernelProgram prog;
  AddRandomBuffer("a", p, s.count, kSeedA, &prog);
  if (Binary(s.kind)) AddRandomBuffer("b", p, s.count, kSeedB, &prog);
  AddOutputBuffer("out", StorageType(p), s.count, &prog);
  std::ostringstream o;
  o << TypePreamble(p);
  if (reference) {
    // A single work-item walks the whole tensor: trusted, independent of any work-size choice.
    o << "__kernel void eltwise_ref(__global const T* A, __global const T* B, __global T* out) {\n"
      << "  for (long i = 0; i < " << s.count << "L; ++i) {\n"
      << "    const float a = (float)LD(A, i);\n"
      << (Binary(s.kind) ? "    const float b = (float)LD(B, i);\n" : "") << "    ST(out, i, " << Expr(s.kind)
      << ");\n  }\n}\n";
  } else {
    o << "__kernel void eltwise(__global const T* restrict A, __global const T* restrict B, __global T* out) {\n"
      << "  const long i = get_global_id(0);\n"
      << "  if (i >= " << s.count << "L) return;\n"
      << "  const float a = (float)LD(A, i);\n"
      << (Binary(s.kind) ? "  const float b = (float)LD(B, i);\n" : "") << "  ST(out, i, " << Expr(s.kind) << ");\n}\n";
  }
  auto* l = AddLaunch(&prog, o.str(), reference ? "eltwise_ref" : "eltwise", proto::KernelLaunch::TIMED,
                      {reference ? 1 : GlobalSizeFor(s.count, local_size)},
                      reference ? std::vector<uint64_t>{1} : LocalSizeOf(local_size));
  ArgBuffer(l, "a");
  ArgBuffer(l, Binary(s.kind) ? "b" : "a");
  ArgBuffer(l, "out");
  SetTolerance(p, 1, &prog);
  return prog;
}

}  // namespace

bool ElementwiseWorksizeTemplate::Supports(const Task& task, const DeviceLimits& limits, std::string* why) const {
  Result<Shape> s = ShapeOf(task);
  if (!s.ok()) {
    if (why) *why = s.status().message();
    return false;
  }
  return PrecisionSupported(task.precision, limits, why);
}

Result<Space> ElementwiseWorksizeTemplate::MakeSpace(const Task& task, const DeviceLimits& limits) const {
  std::string why;
  if (!Supports(task, limits, &why)) return Status::InvalidArgument(task.ToSpec() + ": " + why);
  Space space;
  AddLocalSizeKnob(limits, &space);
  return space;
}

Result<proto::KernelProgram> ElementwiseWorksizeTemplate::Generate(const Task& task, const Space& space,
                                                                   const Config& c) const {
  TF_ASSIGN_OR_RETURN(Shape s, ShapeOf(task));
  if (std::string why = space.Check(c); !why.empty()) return Status::InvalidArgument("invalid config: " + why);
  proto::KernelProgram prog = Program(s, task.precision, ConfigView(space, c).Value("local_size"), false);
  *prog.mutable_reference() = Reference(task);
  return prog;
}

proto::KernelProgram ElementwiseWorksizeTemplate::Reference(const Task& task) const {
  Result<Shape> s = ShapeOf(task);
  return s.ok() ? Program(*s, task.precision, 0, true) : proto::KernelProgram();
}

double ElementwiseWorksizeTemplate::Flops(const Task& task) const {
  Result<Shape> s = ShapeOf(task);
  return s.ok() ? static_cast<double>(s->count) : 0.0;
}

Config ElementwiseWorksizeTemplate::Fallback(const Task&, const Space& space) const {
  return space.FromIndex(0);  // the driver's choice
}

std::vector<float> ElementwiseWorksizeTemplate::DerivedFeatures(const Task& task, const Space& space,
                                                                const Config& c, const DeviceLimits&) const {
  Result<Shape> s = ShapeOf(task);
  if (!s.ok()) return {};
  const int64_t l = ConfigView(space, c).Value("local_size");
  return {static_cast<float>(l), static_cast<float>(l > 0 ? CeilDiv(s->count, l) : 0)};
}

double ElementwiseWorksizeTemplate::WorkItems(const Task& task, const Space& space, const Config& c) const {
  Result<Shape> s = ShapeOf(task);
  return s.ok() ? static_cast<double>(GlobalSizeFor(s->count, ConfigView(space, c).Value("local_size"))) : 0;
}

std::unique_ptr<Template> NewElementwiseWorksizeTemplate() { return std::make_unique<ElementwiseWorksizeTemplate>(); }

}  // namespace tunefleet

#include "search-spaces/gemm_template.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "search-spaces/gemm_kernel.h"

namespace tunefleet {
namespace {

constexpr uint64_t kSeedA = 1, kSeedB = 2, kSeedBias = 3;

proto::ElemType StorageElem(const GemmShape& s) {
  return s.precision == Precision::kFloat32 ? proto::FLOAT32 : proto::FLOAT16;
}

// An input (random) or the output (NaN: every element must be written, see proto::BufferSpec::NANS).
void AddBuffer(proto::KernelProgram& p, const std::string& name, const GemmShape& s, uint64_t count,
               uint64_t seed, bool random) {
  proto::BufferSpec* b = p.add_buffers();
  b->set_name(name);
  b->set_type(StorageElem(s));
  b->set_count(count);
  b->set_init(random ? proto::BufferSpec::RANDOM : proto::BufferSpec::NANS);
  if (random) {
    b->set_seed(seed);
    b->set_lo(-1.0f);
    b->set_hi(1.0f);
  }
}

// Buffers, and a launch with the argument list A, B, [bias], C; source and geometry left to the caller.
proto::KernelProgram Skeleton(const GemmShape& s, proto::KernelLaunch** launch) {
  proto::KernelProgram p;
  const uint64_t batch = s.batch;
  AddBuffer(p, "A", s, batch * s.m * s.k, kSeedA, true);
  AddBuffer(p, "B", s, batch * s.k * s.n, kSeedB, true);
  if (s.bias) AddBuffer(p, "bias", s, s.n, kSeedBias, true);
  AddBuffer(p, "C", s, batch * s.m * s.n, 0, false);
  p.set_output_buffer("C");
  *launch = p.add_launches();
  (*launch)->set_phase(proto::KernelLaunch::TIMED);
  (*launch)->add_args()->set_buffer("A");
  (*launch)->add_args()->set_buffer("B");
  if (s.bias) (*launch)->add_args()->set_buffer("bias");
  (*launch)->add_args()->set_buffer("C");
  return p;
}

}  // namespace

void GemmBufferTemplate::Tolerance(const GemmShape& s, float* rtol, float* atol) {
  const double k = static_cast<double>(s.k);
  switch (s.precision) {
    case Precision::kFloat32:  // summation order differs: error grows about with K
      *rtol = 1e-3f;
      *atol = static_cast<float>(1e-4 * std::max(1.0, k / 256.0));
      break;
    case Precision::kFloat16Acc32:  // inputs equal, output rounded to half once
      *rtol = 5e-3f;
      *atol = static_cast<float>(1e-3 * std::max(1.0, std::sqrt(k / 64.0)));
      break;
    case Precision::kFloat16:  // half accumulation: rounding of the running sums grows with K
      *rtol = 2e-2f;
      *atol = static_cast<float>(1e-2 + 3e-4 * k);
      break;
  }
}

bool GemmBufferTemplate::Supports(const Task& task, const DeviceLimits& limits, std::string* why) const {
  auto no = [why](std::string w) {
    if (why) *why = std::move(w);
    return false;
  };
  if (task.op != "gemm") return no("gemm.buffer only runs gemm tasks, not " + task.op);
  // float16-acc32 only stores half (vload_half / vstore_half are core OpenCL); float16 computes in half.
  if (task.precision == Precision::kFloat16 && !limits.fp16) return no("device has no cl_khr_fp16");
  if (limits.max_work_group_size < 16) return no("device work-groups are smaller than 16 items");
  auto shape = GemmShape::FromTask(task);
  if (!shape.ok()) return no(shape.status().message());
  return true;
}

Result<Space> GemmBufferTemplate::MakeSpace(const Task& task, const DeviceLimits& limits) const {
  std::string why;
  if (!Supports(task, limits, &why)) return Status::InvalidArgument(task.ToSpec() + ": " + why);
  TF_ASSIGN_OR_RETURN(GemmShape shape, GemmShape::FromTask(task));
  return MakeGemmSpace(shape, limits);
}

Result<proto::KernelProgram> GemmBufferTemplate::Generate(const Task& task, const Space& space,
                                                         const Config& c) const {
  TF_ASSIGN_OR_RETURN(GemmShape shape, GemmShape::FromTask(task));
  std::string why = space.Check(c);
  if (!why.empty()) return Status::InvalidArgument("gemm.buffer config " + space.ToJson(c).dump() + ": " + why);
  const GemmConfig cfg = GemmConfig::FromView(ConfigView(space, c));
  proto::KernelLaunch* launch = nullptr;
  proto::KernelProgram p = Skeleton(shape, &launch);
  launch->set_source(GemmKernelSource(shape, cfg));
  launch->set_entry(kGemmEntry);
  launch->set_build_options("-cl-mad-enable");
  for (uint64_t g : GemmGlobalSize(shape, cfg)) launch->add_global_size(g);
  for (uint64_t l : GemmLocalSize(cfg)) launch->add_local_size(l);
  *p.mutable_reference() = Reference(task);
  float rtol = 0, atol = 0;
  Tolerance(shape, &rtol, &atol);
  p.set_rtol(rtol);
  p.set_atol(atol);
  return p;
}

proto::KernelProgram GemmBufferTemplate::Reference(const Task& task) const {
  auto shape = GemmShape::FromTask(task);
  const GemmShape s = shape.ok() ? *shape : GemmShape{};
  proto::KernelLaunch* launch = nullptr;
  proto::KernelProgram p = Skeleton(s, &launch);
  launch->set_source(GemmReferenceSource(s));
  launch->set_entry(kGemmReferenceEntry);
  for (uint64_t g : GemmReferenceGlobalSize(s)) launch->add_global_size(g);
  return p;
}

double GemmBufferTemplate::Flops(const Task& task) const {
  auto shape = GemmShape::FromTask(task);
  if (!shape.ok()) return 0;
  const double outputs = static_cast<double>(shape->batch) * shape->m * shape->n;
  double flops = 2.0 * outputs * static_cast<double>(shape->k);
  if (shape->bias) flops += outputs;
  if (shape->act != Activation::kNone) flops += outputs;
  return flops;
}

Config GemmBufferTemplate::Fallback(const Task& /*task*/, const Space& space) const {
  // Preferred: 32x32 tiles on 8x8 items (64 items, 4 KiB of float tiles), then smaller ones for tiny or odd
  // problems; these fit any device with 64-item work-groups and 16 KiB of local memory.
  const std::vector<std::vector<int64_t>> prefs = {
      {32, 32, 8, 8, 16}, {16, 32, 8, 8, 16}, {32, 16, 8, 8, 16}, {16, 16, 8, 8, 16}, {16, 16, 8, 8, 8},
      {8, 16, 8, 8, 8},   {16, 8, 8, 8, 8},   {8, 8, 8, 8, 8},    {8, 8, 4, 4, 8}};
  for (const auto& p : prefs) {
    nlohmann::json j = {{"MWG", p[0]}, {"NWG", p[1]}, {"MDIMC", p[2]}, {"NDIMC", p[3]}, {"KWG", p[4]},
                        {"KWI", 1},    {"VWM", 1},    {"VWN", 1},      {"VWK", 1},      {"SA", 1},
                        {"SB", 1},     {"DB", 0}};
    auto c = space.FromJson(j);
    if (c.ok() && space.Valid(*c)) return *c;
  }
  // Any valid config (the space is never empty for a supported task: 8x8 tiles on 4x4 items always fit).
  Config found = space.FromIndex(0);
  space.ForEachValid([&](uint64_t i) {
    found = space.FromIndex(i);
    return false;
  });
  return found;
}

std::vector<float> GemmBufferTemplate::DerivedFeatures(const Task& task, const Space& space, const Config& c,
                                                       const DeviceLimits& limits) const {
  auto shape = GemmShape::FromTask(task);
  const GemmShape s = shape.ok() ? *shape : GemmShape{};
  const GemmConfig g = GemmConfig::FromView(ConfigView(space, c));
  const double groups = std::ceil(static_cast<double>(s.m) / g.mwg) * std::ceil(static_cast<double>(s.n) / g.nwg) *
                        static_cast<double>(s.batch);
  const double intensity = 2.0 * g.mwg * g.nwg / (static_cast<double>(g.mwg + g.nwg) * s.StorageBytes());
  return {static_cast<float>(g.threads()),
          static_cast<float>(g.mwi() * g.nwi()),
          static_cast<float>(groups / std::max<uint32_t>(1, limits.compute_units)),
          static_cast<float>(g.LocalBytes(s)),
          static_cast<float>(g.vwm),
          static_cast<float>(g.vwn),
          static_cast<float>(g.vwk),
          static_cast<float>(g.kwi),
          static_cast<float>(g.Registers(s)),
          static_cast<float>(intensity)};
}

double GemmBufferTemplate::WorkItems(const Task& task, const Space& space, const Config& c) const {
  Result<GemmShape> shape = GemmShape::FromTask(task);
  if (!shape.ok()) return 0;
  double items = 1;
  for (uint64_t g : GemmGlobalSize(*shape, GemmConfig::FromView(ConfigView(space, c)))) {
    items *= static_cast<double>(g);
  }
  return items;
}

std::unique_ptr<Template> MakeGemmBufferTemplate() { return std::make_unique<GemmBufferTemplate>(); }

}  // namespace tunefleet

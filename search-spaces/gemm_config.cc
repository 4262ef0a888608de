#include "search-spaces/gemm_config.h"

#include <array>

namespace tunefleet {
namespace {

constexpr std::array<const char*, 12> kKnobs = {"MWG", "NWG", "MDIMC", "NDIMC", "KWG", "KWI",
                                                "VWM", "VWN", "VWK",   "SA",    "SB",  "DB"};

// Knob positions looked up once per space, so constraints avoid name searches in the hot enumeration loop.
struct KnobIndex {
  std::array<int, kKnobs.size()> at{};
  explicit KnobIndex(const Space& s) {
    for (size_t i = 0; i < kKnobs.size(); ++i) at[i] = s.KnobIndex(kKnobs[i]);
  }
  GemmConfig Read(const ConfigView& v) const {
    GemmConfig c;
    c.mwg = v.Value(at[0]);
    c.nwg = v.Value(at[1]);
    c.mdimc = v.Value(at[2]);
    c.ndimc = v.Value(at[3]);
    c.kwg = v.Value(at[4]);
    c.kwi = v.Value(at[5]);
    c.vwm = v.Value(at[6]);
    c.vwn = v.Value(at[7]);
    c.vwk = v.Value(at[8]);
    c.sa = v.Value(at[9]) != 0;
    c.sb = v.Value(at[10]) != 0;
    c.db = v.Value(at[11]) != 0;
    return c;
  }
};

// A tile more than twice the problem's extent only computes padding; keep the smallest tile always.
bool TileUseful(int64_t tile, int64_t extent, int64_t smallest) { return tile == smallest || tile / 2 < extent; }

// Structural rules: the kernel's index arithmetic is only correct when these hold. Returns a fixed text (no
// allocation: this runs for every raw point when a space is counted) or nullptr when the config is fine.
const char* StructureFailure(const GemmShape& s, const GemmConfig& c) {
  if (c.mwg % (c.mdimc * c.vwm) != 0) return "MWG is not a multiple of MDIMC*VWM";
  if (c.nwg % (c.ndimc * c.vwn) != 0) return "NWG is not a multiple of NDIMC*VWN";
  if (c.kwg % c.kwi != 0) return "KWG is not a multiple of KWI";
  if (c.mwi() * c.nwi() > 256) return "more than 256 outputs per work-item";
  const bool vwk_used = c.sa || (c.sb && s.transb);
  if (!vwk_used && c.vwk != 1) return "VWK > 1 needs a tile loaded along K (SA, or SB with transb)";
  if (c.vwk > 1 && (c.kwg % c.vwk != 0 || s.k % c.vwk != 0)) return "VWK does not divide KWG and K";
  if (c.vwn > 1 && s.n % c.vwn != 0) return "VWN does not divide N";
  if (c.sa && (c.mwg * c.kwg) % (c.threads() * c.vwk) != 0) return "A tile does not split evenly over items";
  if (c.sb && (c.nwg * c.kwg) % (c.threads() * (s.transb ? c.vwk : c.vwn)) != 0)
    return "B tile does not split evenly over items";
  if (c.db && !c.sa && !c.sb) return "DB needs a tile in local memory (SA or SB)";
  return nullptr;
}

const char* SizeFailure(const GemmShape& s, const GemmConfig& c) {
  if (!TileUseful(c.mwg, s.m, 8)) return "MWG is more than twice M";
  if (!TileUseful(c.nwg, s.n, 8)) return "NWG is more than twice N";
  if (!TileUseful(c.kwg, s.k, 8)) return "KWG is more than twice K";
  return nullptr;
}

std::string Text(const char* failure) { return failure ? failure : ""; }

}  // namespace

Result<GemmShape> GemmShape::FromTask(const Task& task) {
  if (task.op != "gemm") return Status::InvalidArgument(task.ToSpec() + ": not a gemm task");
  GemmShape s;
  s.m = task.Get("M");
  s.n = task.Get("N");
  s.k = task.Get("K");
  s.batch = task.Get("batch", 1);
  s.transb = task.Get("transb") != 0;
  s.bias = task.Get("bias") != 0;
  s.act = static_cast<Activation>(task.Get("act"));
  s.precision = task.precision;
  if (s.m < 1 || s.n < 1 || s.k < 1 || s.batch < 1)
    return Status::InvalidArgument(task.ToSpec() + ": gemm sizes must be positive");
  if (s.batch * s.m * s.k >= (int64_t{1} << 31) || s.batch * s.k * s.n >= (int64_t{1} << 31) ||
      s.batch * s.m * s.n >= (int64_t{1} << 31))
    return Status::InvalidArgument(task.ToSpec() + ": a gemm operand has 2^31 elements or more");
  return s;
}

GemmConfig GemmConfig::FromView(const ConfigView& v) {
  GemmConfig c;
  c.mwg = v.Value("MWG");
  c.nwg = v.Value("NWG");
  c.mdimc = v.Value("MDIMC");
  c.ndimc = v.Value("NDIMC");
  c.kwg = v.Value("KWG");
  c.kwi = v.Value("KWI");
  c.vwm = v.Value("VWM");
  c.vwn = v.Value("VWN");
  c.vwk = v.Value("VWK");
  c.sa = v.Value("SA") != 0;
  c.sb = v.Value("SB") != 0;
  c.db = v.Value("DB") != 0;
  return c;
}

uint64_t GemmConfig::LocalBytes(const GemmShape& s) const {
  uint64_t elems = (sa ? mwg * kwg : 0) + (sb ? nwg * kwg : 0);
  return elems * s.LocalElemBytes() * (db ? 2 : 1);
}

uint64_t GemmConfig::Registers(const GemmShape& s) const {
  // Only float16 holds half values in registers (two per 32-bit register); float16-acc32 loads into floats.
  const bool half_regs = s.LocalElemBytes() == 2;
  uint64_t acc = mwi() * nwi();
  if (half_regs) acc = (acc + 1) / 2;
  uint64_t prefetch_elems = (sa ? a_loads() * vwk : 0) + (sb ? b_loads(s.transb) * (s.transb ? vwk : vwn) : 0);
  if (half_regs) prefetch_elems = (prefetch_elems + 1) / 2;
  return acc + mwi() + nwi() + prefetch_elems + 16;
}

Space MakeGemmSpace(const GemmShape& shape, const DeviceLimits& limits) {
  Space s;
  s.AddList("MWG", {8, 16, 32, 64, 128, 256})
      .AddList("NWG", {8, 16, 32, 64, 128, 256})
      .AddList("MDIMC", {4, 8, 16, 32})
      .AddList("NDIMC", {4, 8, 16, 32})
      .AddList("KWG", {8, 16, 32})
      .AddList("KWI", {1, 2, 4, 8, 16})
      .AddList("VWM", {1, 2, 4, 8})
      .AddList("VWN", {1, 2, 4, 8})
      .AddList("VWK", {1, 2, 4})
      .AddBool("SA")
      .AddBool("SB")
      .AddBool("DB");
  KnobIndex idx(s);
  s.AddConstraint(
      "sizes", [idx, shape](const ConfigView& v) { return SizeFailure(shape, idx.Read(v)) == nullptr; },
      [idx, shape](const ConfigView& v) { return Text(SizeFailure(shape, idx.Read(v))); });
  s.AddConstraint(
      "structure", [idx, shape](const ConfigView& v) { return StructureFailure(shape, idx.Read(v)) == nullptr; },
      [idx, shape](const ConfigView& v) { return Text(StructureFailure(shape, idx.Read(v))); });
  s.AddConstraint(
      "device_work_group",
      [idx, limits](const ConfigView& v) {
        GemmConfig c = idx.Read(v);
        return static_cast<uint64_t>(c.threads()) <= limits.max_work_group_size &&
               static_cast<uint64_t>(c.ndimc) <= limits.max_work_item_sizes[0] &&
               static_cast<uint64_t>(c.mdimc) <= limits.max_work_item_sizes[1];
      },
      [idx, limits](const ConfigView& v) {
        GemmConfig c = idx.Read(v);
        return limits.CheckWorkGroup({static_cast<uint64_t>(c.ndimc), static_cast<uint64_t>(c.mdimc)});
      });
  s.AddConstraint(
      "device_local_memory",
      [idx, shape, limits](const ConfigView& v) { return idx.Read(v).LocalBytes(shape) <= limits.local_mem_bytes; },
      [idx, shape, limits](const ConfigView& v) { return limits.CheckLocalMemory(idx.Read(v).LocalBytes(shape)); });
  s.AddConstraint("device_registers", [idx, shape, limits](const ConfigView& v) {
    GemmConfig c = idx.Read(v);
    return limits.CheckRegisters(c.Registers(shape), c.threads());
  });
  return s;
}

}  // namespace tunefleet

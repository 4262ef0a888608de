#include "search-spaces/gemm_kernel.h"

#include <sstream>

namespace tunefleet {
namespace {

std::string VecType(const char* scalar, int64_t w) { return w == 1 ? scalar : scalar + std::to_string(w); }
std::string Comp(int64_t j) { return ".s" + std::to_string(j); }

// float16-acc32 keeps half in global memory only: it is read and written through the core vload_half /
// vstore_half built-ins (no cl_khr_fp16), and the local tiles, prefetch registers and arithmetic are float.
bool HalfStorageOnly(const GemmShape& sh) { return sh.precision == Precision::kFloat16Acc32; }

// The element type of the global pointers: `real` unless that is float while the buffers hold half.
const char* GlobalType(const GemmShape& sh) { return HalfStorageOnly(sh) ? "half" : "real"; }

// Element `idx` of global buffer `p` as a scalar.
std::string LoadScalar(const GemmShape& sh, const std::string& p, const std::string& idx) {
  return HalfStorageOnly(sh) ? "vload_half(" + idx + ", " + p + ")" : p + "[" + idx + "]";
}

// A global vector load of width `w` at p + off: through a vector pointer (the compiler emits wide loads), or
// vload_halfN for float16-acc32 (2-byte alignment suffices).
std::string LoadGlobal(const GemmShape& sh, const char* type, int64_t w) {
  if (!HalfStorageOnly(sh)) return std::string("(*(const __global ") + type + "*)((p) + (off)))";
  return "vload_half" + (w == 1 ? std::string() : std::to_string(w)) + "(0, (p) + (off))";
}

// Emits the width-specific helper macros; `s` is the type of local tiles and registers ("float", or "half" for
// float16), acc_t the accumulation type.
void EmitHelpers(std::ostringstream& o, const GemmShape& sh, const GemmConfig& c) {
  const bool half = sh.precision != Precision::kFloat32;  // half in global memory
  const char* s = sh.precision == Precision::kFloat16 ? "half" : "float";
  o << "typedef " << s << " real;\n";
  o << "typedef " << (sh.precision == Precision::kFloat16 ? "half" : "float") << " acc_t;\n";
  o << "typedef " << VecType(s, c.vwm) << " realM;\n";
  o << "typedef " << VecType(s, c.vwn) << " realN;\n";
  o << "typedef " << VecType(s, c.vwk) << " realK;\n";
  o << "typedef " << VecType("float", c.vwn) << " floatN;\n";
  // Vector accesses through vector pointers (global loads of float16-acc32: vload_halfN), so the compiler emits
  // wide loads: every offset is a multiple of the width and buffers and local tiles are aligned (the space
  // guarantees VWN | N and VWK | K).
  o << "#define LDG_K(p, off) " << LoadGlobal(sh, "realK", c.vwk) << "\n"
    << "#define LDG_N(p, off) " << LoadGlobal(sh, "realN", c.vwn) << "\n"
    << "#define LDL_M(p, off) (*(const __local realM*)((p) + (off)))\n"
    << "#define LDL_N(p, off) (*(const __local realN*)((p) + (off)))\n"
    << "#define STL_N(p, off, v) (*(__local realN*)((p) + (off)) = (v))\n";
  o << "#define ZERO_N ((realN)((real)0))\n#define ZERO_K ((realK)((real)0))\n";
  // Vector -> accumulator registers dst[i..i+w).
  auto unpack = [&](const char* name, int64_t w) {
    o << "#define " << name << "(dst, i, v) {";
    if (w == 1) o << " (dst)[i] = (acc_t)(v);";
    for (int64_t j = 0; w > 1 && j < w; ++j) o << " (dst)[(i) + " << j << "] = (acc_t)(v)" << Comp(j) << ";";
    o << " }\n";
  };
  unpack("UNPACK_M", c.vwm);
  unpack("UNPACK_N", c.vwn);
  // Transposing store of a K-vector into a k-major local tile: lm[base + j*stride] = v[j].
  o << "#define TST_K(lm, base, stride, v) {";
  if (c.vwk == 1) o << " (lm)[base] = (v);";
  for (int64_t j = 0; c.vwk > 1 && j < c.vwk; ++j)
    o << " (lm)[(base) + " << j << " * (stride)] = (v)" << Comp(j) << ";";
  o << " }\n";
  // Accumulators src[j..j+VWN) -> floatN for the epilogue.
  o << "#define PACK_N(src, j) ";
  if (c.vwn == 1) {
    o << "((float)(src)[j])\n";
  } else {
    o << "((floatN)(";
    for (int64_t j = 0; j < c.vwn; ++j) o << (j ? ", " : "") << "(float)(src)[(j) + " << j << "]";
    o << "))\n";
  }
  const std::string w = c.vwn == 1 ? "" : std::to_string(c.vwn);
  if (half) {
    o << "#define LD_BIAS(p, off) vload_half" << w << "(0, (p) + (off))\n";
    o << "#define ST_C(p, off, v) vstore_half" << w << "((v), 0, (p) + (off))\n";
  } else {
    o << "#define LD_BIAS(p, off) LDG_N(p, off)\n";
    o << "#define ST_C(p, off, v) (*(__global floatN*)((p) + (off)) = (v))\n";
  }
  o << "#define ACT(x) (" << ActivationExpr(sh.act, "(x)") << ")\n";
}

// A condition text joining the guards that are needed; empty when none is.
std::string Guard(std::initializer_list<std::pair<bool, const char*>> parts) {
  std::string g;
  for (const auto& [needed, text] : parts) {
    if (!needed) continue;
    g += (g.empty() ? "" : " && ") + std::string(text);
  }
  return g;
}

std::string Guarded(const std::string& cond, const std::string& lhs, const std::string& value,
                    const std::string& zero) {
  if (cond.empty()) return lhs + " = " + value + ";";
  return "if (" + cond + ") " + lhs + " = " + value + "; else " + lhs + " = " + zero + ";";
}

struct Gen {
  const GemmShape& sh;
  const GemmConfig& c;
  bool gm, gn, gk;  // guards needed in M, N, K

  // Global -> prefetch registers ra/rb for the K tile starting at `k0`.
  std::string Load(const std::string& k0) const {
    std::ostringstream o;
    if (c.sa) {
      o << "#pragma unroll\n    for (int i = 0; i < LPTA; ++i) {\n"
        << "      const int v = lid + i * WGS, row = v / (KWG / VWK), col = (v % (KWG / VWK)) * VWK;\n"
        << "      const int gm = m0 + row, gk = (" << k0 << ") + col;\n      "
        << Guarded(Guard({{gm, "gm < M"}, {gk, "gk < K"}}), "ra[i]", "LDG_K(A, gm * K + gk)", "ZERO_K") << "\n    }\n";
    }
    if (c.sb && !sh.transb) {
      o << "#pragma unroll\n    for (int i = 0; i < LPTB; ++i) {\n"
        << "      const int v = lid + i * WGS, row = v / (NWG / VWN), col = (v % (NWG / VWN)) * VWN;\n"
        << "      const int gk = (" << k0 << ") + row, gn = n0 + col;\n      "
        << Guarded(Guard({{gk, "gk < K"}, {gn, "gn < N"}}), "rb[i]", "LDG_N(B, gk * N + gn)", "ZERO_N") << "\n    }\n";
    }
    if (c.sb && sh.transb) {
      o << "#pragma unroll\n    for (int i = 0; i < LPTB; ++i) {\n"
        << "      const int v = lid + i * WGS, row = v / (KWG / VWK), col = (v % (KWG / VWK)) * VWK;\n"
        << "      const int gn = n0 + row, gk = (" << k0 << ") + col;\n      "
        << Guarded(Guard({{gn, "gn < N"}, {gk, "gk < K"}}), "rb[i]", "LDG_K(B, gn * K + gk)", "ZERO_K") << "\n    }\n";
    }
    return o.str();
  }

  // Prefetch registers -> local tile buffer `buf`.
  std::string Store(const std::string& buf) const {
    std::ostringstream o;
    if (c.sa) {
      o << "#pragma unroll\n    for (int i = 0; i < LPTA; ++i) {\n"
        << "      const int v = lid + i * WGS, row = v / (KWG / VWK), col = (v % (KWG / VWK)) * VWK;\n"
        << "      TST_K(Alm, (" << buf << ") * (KWG * MWG) + col * MWG + row, MWG, ra[i]);\n    }\n";
    }
    if (c.sb && !sh.transb) {
      o << "#pragma unroll\n    for (int i = 0; i < LPTB; ++i) {\n"
        << "      const int v = lid + i * WGS, row = v / (NWG / VWN), col = (v % (NWG / VWN)) * VWN;\n"
        << "      STL_N(Blm, (" << buf << ") * (KWG * NWG) + row * NWG + col, rb[i]);\n    }\n";
    }
    if (c.sb && sh.transb) {
      o << "#pragma unroll\n    for (int i = 0; i < LPTB; ++i) {\n"
        << "      const int v = lid + i * WGS, row = v / (KWG / VWK), col = (v % (KWG / VWK)) * VWK;\n"
        << "      TST_K(Blm, (" << buf << ") * (KWG * NWG) + col * NWG + row, NWG, rb[i]);\n    }\n";
    }
    return o.str();
  }

  // The multiply-accumulate over one K tile (local buffer `buf` for staged operands, `k0` for direct ones).
  std::string Compute(const std::string& buf, const std::string& k0) const {
    std::ostringstream o;
    o << "#pragma unroll " << c.kwi << "\n    for (int k = 0; k < KWG; ++k) {\n"
      << "      acc_t a[MWI], bv[NWI];\n";
    if (!c.sa || !c.sb) o << "      const int gk = (" << k0 << ") + k;\n";
    o << "#pragma unroll\n      for (int i = 0; i < MWI / VWM; ++i) {\n"
      << "        const int mm = (i * MDIMC + tm) * VWM;\n";
    if (c.sa) {
      o << "        const realM t = LDL_M(Alm, (" << buf << ") * (KWG * MWG) + k * MWG + mm);\n"
        << "        UNPACK_M(a, i * VWM, t);\n";
    } else {
      o << "#pragma unroll\n        for (int j = 0; j < VWM; ++j) {\n"
        << "          const int gm = m0 + mm + j;\n          "
        << Guarded(Guard({{gm, "gm < M"}, {gk, "gk < K"}}), "a[i * VWM + j]",
                   "(acc_t)" + LoadScalar(sh, "A", "gm * K + gk"), "(acc_t)0")
        << "\n        }\n";
    }
    o << "      }\n#pragma unroll\n      for (int j = 0; j < NWI / VWN; ++j) {\n"
      << "        const int nn = (j * NDIMC + tn) * VWN;\n";
    if (c.sb) {
      o << "        const realN t = LDL_N(Blm, (" << buf << ") * (KWG * NWG) + k * NWG + nn);\n"
        << "        UNPACK_N(bv, j * VWN, t);\n";
    } else if (!sh.transb) {
      o << "        const int gn = n0 + nn;\n        realN t;\n        "
        << Guarded(Guard({{gk, "gk < K"}, {gn, "gn < N"}}), "t", "LDG_N(B, gk * N + gn)", "ZERO_N") << "\n"
        << "        UNPACK_N(bv, j * VWN, t);\n";
    } else {
      o << "#pragma unroll\n        for (int v = 0; v < VWN; ++v) {\n"
        << "          const int gn = n0 + nn + v;\n          "
        << Guarded(Guard({{gn, "gn < N"}, {gk, "gk < K"}}), "bv[j * VWN + v]",
                   "(acc_t)" + LoadScalar(sh, "B", "gn * K + gk"), "(acc_t)0")
        << "\n        }\n";
    }
    o << "      }\n#pragma unroll\n      for (int i = 0; i < MWI; ++i)\n#pragma unroll\n"
      << "        for (int j = 0; j < NWI; ++j) acc[i * NWI + j] += a[i] * bv[j];\n    }\n";
    return o.str();
  }
};

void Define(std::ostringstream& o, const char* name, int64_t v) { o << "#define " << name << " " << v << "\n"; }

}  // namespace

std::string GemmKernelSource(const GemmShape& sh, const GemmConfig& c) {
  std::ostringstream o;
  const Gen g{sh, c, sh.m % c.mwg != 0, sh.n % c.nwg != 0, sh.k % c.kwg != 0};
  o << "// gemm.buffer: C = A * B" << (sh.transb ? "^T" : "") << " (row-major), register-tiled; generated.\n";
  if (sh.precision == Precision::kFloat16) o << "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";
  Define(o, "M", sh.m);
  Define(o, "N", sh.n);
  Define(o, "K", sh.k);
  Define(o, "MWG", c.mwg);
  Define(o, "NWG", c.nwg);
  Define(o, "MDIMC", c.mdimc);
  Define(o, "NDIMC", c.ndimc);
  Define(o, "KWG", c.kwg);
  Define(o, "VWM", c.vwm);
  Define(o, "VWN", c.vwn);
  Define(o, "VWK", c.vwk);
  o << "#define MWI (MWG / MDIMC)\n#define NWI (NWG / NDIMC)\n#define WGS (MDIMC * NDIMC)\n"
    << "#define NT ((K + KWG - 1) / KWG)\n";
  if (c.sa) Define(o, "LPTA", c.a_loads());
  if (c.sb) Define(o, "LPTB", c.b_loads(sh.transb));
  EmitHelpers(o, sh, c);

  const int nbuf = c.db ? 2 : 1;
  const std::string gt = GlobalType(sh);
  o << "\n__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))\n"
    << "void " << kGemmEntry << "(const __global " << gt << "* restrict A, const __global " << gt
    << "* restrict B,\n"
    << (sh.bias ? "    const __global " + gt + "* restrict bias,\n" : std::string()) << "    __global " << gt
    << "* restrict C) {\n"
    << "  const int tn = get_local_id(0), tm = get_local_id(1);\n"
    << "  const int lid = tm * NDIMC + tn;\n"
    << "  const int m0 = get_group_id(1) * MWG, n0 = get_group_id(0) * NWG;\n"
    << "  const size_t b = get_group_id(2);\n"
    << "  A += b * (M * K);\n  B += b * (K * N);\n  C += b * (M * N);\n";
  if (c.sa) o << "  __local real Alm[" << nbuf << " * KWG * MWG] __attribute__((aligned(32)));\n  realK ra[LPTA];\n";
  if (c.sb)
    o << "  __local real Blm[" << nbuf << " * KWG * NWG] __attribute__((aligned(32)));\n  "
      << (sh.transb ? "realK" : "realN") << " rb[LPTB];\n";
  o << "  acc_t acc[MWI * NWI];\n#pragma unroll\n  for (int i = 0; i < MWI * NWI; ++i) acc[i] = (acc_t)0;\n\n";

  if (!c.sa && !c.sb) {
    o << "#pragma unroll 1\n  for (int t = 0; t < NT; ++t) {\n    const int k0 = t * KWG;\n"
      << g.Compute("0", "k0") << "  }\n";
  } else if (!c.db) {
    o << "#pragma unroll 1\n  for (int t = 0; t < NT; ++t) {\n    const int k0 = t * KWG;\n"
      << g.Load("k0") << g.Store("0") << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
      << g.Compute("0", "k0") << "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n";
  } else {
    // Two local buffers: tile t+1 travels global -> registers during tile t's arithmetic, then lands in the
    // other buffer; one barrier per tile suffices because every item finished reading that buffer (tile t-1)
    // before the previous barrier.
    o << "  {\n" << g.Load("0") << g.Store("0") << "  }\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "#pragma unroll 1\n  for (int t = 0; t < NT; ++t) {\n    const int k0 = t * KWG, cur = t & 1;\n"
      << "    if (t + 1 < NT) {\n" << g.Load("k0 + KWG") << "    }\n"
      << g.Compute("cur", "k0") << "    if (t + 1 < NT) {\n" << g.Store("cur ^ 1") << "    }\n"
      << "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n";
  }

  o << "\n#pragma unroll\n  for (int i = 0; i < MWI / VWM; ++i) {\n#pragma unroll\n"
    << "    for (int vm = 0; vm < VWM; ++vm) {\n"
    << "      const int gm = m0 + (i * MDIMC + tm) * VWM + vm;\n";
  if (g.gm) o << "      if (gm >= M) continue;\n";
  o << "#pragma unroll\n      for (int j = 0; j < NWI / VWN; ++j) {\n"
    << "        const int gn = n0 + (j * NDIMC + tn) * VWN;\n";
  if (g.gn) o << "        if (gn >= N) continue;\n";
  o << "        floatN r = PACK_N(acc, (i * VWM + vm) * NWI + j * VWN);\n";
  if (sh.bias) o << "        r += LD_BIAS(bias, gn);\n";
  if (sh.act != Activation::kNone) o << "        r = ACT(r);\n";
  o << "        ST_C(C, gm * N + gn, r);\n      }\n    }\n  }\n}\n";
  return o.str();
}

std::vector<uint64_t> GemmGlobalSize(const GemmShape& sh, const GemmConfig& c) {
  auto groups = [](int64_t extent, int64_t tile) { return static_cast<uint64_t>((extent + tile - 1) / tile); };
  return {groups(sh.n, c.nwg) * c.ndimc, groups(sh.m, c.mwg) * c.mdimc, static_cast<uint64_t>(sh.batch)};
}

std::vector<uint64_t> GemmLocalSize(const GemmConfig& c) {
  return {static_cast<uint64_t>(c.ndimc), static_cast<uint64_t>(c.mdimc), 1};
}

std::string GemmReferenceSource(const GemmShape& sh) {
  std::ostringstream o;
  const bool half = sh.precision != Precision::kFloat32;
  o << "// gemm reference: one item per output, float accumulation in K order.\n";
  Define(o, "M", sh.m);
  Define(o, "N", sh.n);
  Define(o, "K", sh.k);
  o << "typedef " << (half ? "half" : "float") << " real;\n";
  if (half)
    o << "#define LD(p, i) vload_half((i), (p))\n#define ST(p, i, v) vstore_half((v), (i), (p))\n";
  else
    o << "#define LD(p, i) ((p)[i])\n#define ST(p, i, v) ((p)[i] = (v))\n";
  o << "__kernel void " << kGemmReferenceEntry << "(const __global real* A, const __global real* B,\n"
    << (sh.bias ? "    const __global real* bias,\n" : "") << "    __global real* C) {\n"
    << "  const int n = get_global_id(0), m = get_global_id(1);\n"
    << "  const size_t b = get_global_id(2);\n"
    << "  if (n >= N || m >= M) return;\n"
    << "  A += b * (M * K);\n  B += b * (K * N);\n  C += b * (M * N);\n"
    << "  float acc = 0.0f;\n"
    << "  for (int k = 0; k < K; ++k) acc += LD(A, m * K + k) * LD(B, "
    << (sh.transb ? "n * K + k" : "k * N + n") << ");\n";
  if (sh.bias) o << "  acc += LD(bias, n);\n";
  o << "  acc = " << ActivationExpr(sh.act, "acc") << ";\n"
    << "  ST(C, m * N + n, acc);\n}\n";
  return o.str();
}

std::vector<uint64_t> GemmReferenceGlobalSize(const GemmShape& sh) {
  auto up8 = [](int64_t v) { return static_cast<uint64_t>((v + 7) / 8 * 8); };
  return {up8(sh.n), up8(sh.m), static_cast<uint64_t>(sh.batch)};
}

}  // namespace tunefleet

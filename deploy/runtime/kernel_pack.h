// A kernel pack: the best kernel program per workload for one device model, written by
// `tunefleet export --format kernel-pack` and read by applications through this library.
//
// File format (JSON, version 1):
//   {"format": "tunefleet-kernel-pack", "version": 1,
//    "device": {"name", "vendor", "driver", "opencl_version", "fingerprint"},
//    "kernels":   [Entry...],   // tuned: the fastest measured config of each (task, template); Find
//                              // takes the fastest template's
//    "fallbacks": [Entry...],   // per template and named parameters: its untuned fallback config, valid on any
//                              // device
//    "spec_extras": {op: {name: {"default": n, "names": [...]}}}}  // optional: the named parameters of each op
//                              // (task.h's signatures), so that Find reads "batch=1" or "act=1" as the tuner would
//   Entry: {"task": "gemm:64,64,64:float32", "op", "precision", "template", "template_version",
//           "config": {...}, "record_id", "latency_ms", "gflops", "program": Program,
//           "program_fnv": "16 hex", "entry_fnv": "16 hex"}  // optional: pack_fingerprint.h; an entry whose
//                              // program (or task, template and program) no longer matches is refused
//   Program: {"buffers": [{"name", "type": "float32"|"float16"|"int32", "count", "init": "zeros"|"random"}],
//             "images": [{"name", "type", "width", "height"}],           // RGBA image2d_t, pixels
//             "launches": [{"phase": "setup"|"timed", "entry", "source", "build_options",
//                           "args": [{"buffer": name}|{"image": name}|{"i32": v}|{"f32": v}|{"local_bytes": n}],
//                           "global_size": [...], "local_size": [...]}],  // local_size empty: driver's choice
//             "output_buffer": name}
// A program is built for the workload in its entry's "task": its buffer sizes and launch geometry are
// those of that workload.
// Load/Parse refuse, with one message naming the entry and field, any pack that is not exactly this:
// a wrong JSON type, an unknown enum string, an integer out of range (buffer counts up to 2^31, i32 args
// within int32, f32 args finite floats), a task spec that is not "op:sizes[,name=value...]:precision" as the
// tuner writes it (pack_spec.h) or disagrees with "op"/"precision", duplicate names among buffers and images, an
// argument or output_buffer naming nothing of its kind, global_size of other than 1-3 dims in [1, 2^32], a
// local_size of another rank or not dividing global_size, NUL in any string, JSON nested deeper than 64 levels or a
// number past a double's range, two entries of one list with the same task and template, entries of one op with
// different numbers of sizes, a named parameter of an op the pack describes ("spec_extras") that the op does not
// take or that is not written as the tuner writes it (a default left out, a value by its name), and (Load) a path
// that is not a regular file of at most 64 MiB.
// Thread safety: a loaded KernelPack is immutable and safe to share between threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "deploy/runtime/pack_spec.h"

namespace tunefleet::runtime {

enum class ElemType { kFloat32, kFloat16, kInt32 };
size_t ElemBytes(ElemType t);

struct PackBuffer {
  std::string name;
  ElemType type = ElemType::kFloat32;
  uint64_t count = 0;      // elements
  bool random_init = false;  // an input: the application provides it
  uint64_t bytes = 0;      // count * ElemBytes(type), computed (overflow-checked) by Load/Parse
};

struct PackImage {
  std::string name;
  ElemType type = ElemType::kFloat32;  // kFloat32 or kFloat16, RGBA
  uint64_t width = 0, height = 0;      // pixels
};

struct PackArg {
  enum class Kind { kBuffer, kImage, kI32, kF32, kLocalBytes };
  Kind kind = Kind::kBuffer;
  std::string name;  // buffer or image
  int32_t i32 = 0;
  float f32 = 0;
  uint64_t local_bytes = 0;
};

struct PackLaunch {
  bool setup = false;  // run before the timed launches (packing), part of every application run
  std::string entry, source, build_options;
  std::vector<PackArg> args;
  std::vector<uint64_t> global_size, local_size;
};

struct PackProgram {
  std::vector<PackBuffer> buffers;
  std::vector<PackImage> images;
  std::vector<PackLaunch> launches;
  std::string output_buffer;
  const PackBuffer* FindBuffer(const std::string& name) const;
};

struct PackedKernel {
  std::string task;  // canonical spec of the workload the program was built for
  std::string op, precision, template_name;
  int template_version = 0;
  std::string config;  // JSON text
  int64_t record_id = 0;
  double latency_ms = 0;
  double gflops = 0;
  bool fallback = false;
  PackProgram program;
};

struct PackDevice {
  std::string name, vendor, driver, opencl_version, fingerprint;
};

enum class MatchKind { kExact, kNearest, kFallback };
const char* MatchKindName(MatchKind k);  // "exact", "nearest", "fallback"

struct PackMatch {
  const PackedKernel* kernel = nullptr;  // owned by the pack
  MatchKind kind = MatchKind::kExact;
};

class KernelPack {
 public:
  // Errors name the path (or "kernel pack" for Parse) and what is wrong.
  static Result<KernelPack> Load(const std::string& path);
  static Result<KernelPack> Parse(const std::string& json_text, const std::string& source = "kernel pack");

  const PackDevice& device() const { return device_; }
  const std::vector<PackedKernel>& kernels() const { return kernels_; }
  const std::vector<PackedKernel>& fallbacks() const { return fallbacks_; }

  // The program for a workload ("op:v1,v2,...[,name=value...]:dtype", a missing ":dtype" read as float32): the
  // tuned kernel of exactly that workload; else the tuned kernel of the nearest workload of the same op and
  // precision (same named extras, closest positional sizes on a log scale); else a fallback of the same op,
  // precision and named extras. Named extras are compared as the tuner writes them where the pack describes its
  // ops ("spec_extras"): a default left out, a value by name. Where a workload has a kernel of several templates,
  // the one of the lowest latency_ms. The workload is read as strictly as the pack's own task specs: sizes written
  // as the tuner writes them (digits only: no sign, space or leading zero), no empty parameter, a known precision,
  // as many sizes as the pack's entries of the op have, no named parameter the op does not take (where the pack
  // describes it); anything else is InvalidArgument, naming the workload and what is wrong. NotFound when the pack
  // holds nothing for the op and precision.
  Result<PackMatch> Find(const std::string& task_spec) const;

 private:
  PackDevice device_;
  std::vector<PackedKernel> kernels_;
  std::vector<PackedKernel> fallbacks_;
  std::map<std::string, OpExtras> spec_extras_;  // by op
};

}  // namespace tunefleet::runtime

#include "deploy/runtime/kernel_pack.h"

#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "deploy/runtime/pack_file.h"
#include "deploy/runtime/pack_fingerprint.h"
#include "deploy/runtime/pack_json.h"
#include "deploy/runtime/pack_spec.h"

namespace tunefleet::runtime {
namespace {

using pack_json::Field;

constexpr const char* kFormat = "tunefleet-kernel-pack";
constexpr uint64_t kVersion = 1;
constexpr int64_t kMaxFileBytes = int64_t{64} << 20;
constexpr uint64_t kMaxElements = uint64_t{1} << 31;    // per buffer; pixels per image
constexpr uint64_t kMaxImageSide = uint64_t{1} << 20;   // pixels
constexpr uint64_t kMaxLocalBytes = uint64_t{1} << 31;  // a __local argument
constexpr uint64_t kMaxGlobalSize = uint64_t{1} << 32;  // work-items per dimension
constexpr size_t kMaxDims = 3;

// Names of buffers and images of one program and which of the two each is.
using MemoryKinds = std::map<std::string, PackArg::Kind>;

// The elements read by `read` from the optional array member `key` of `object` (none when absent).
template <typename T, typename Read>
Result<std::vector<T>> ReadList(const Field& object, const std::string& key, Read read) {
  std::vector<T> out;
  std::optional<Field> list = pack_json::OptionalMember(object, key);
  if (!list) return out;
  TF_ASSIGN_OR_RETURN(std::vector<Field> elements, pack_json::Elements(*list));
  for (const Field& e : elements) {
    TF_ASSIGN_OR_RETURN(T v, read(e));
    out.push_back(std::move(v));
  }
  return out;
}

Result<std::string> ReadString(const Field& f) { return pack_json::String(f); }

Result<std::string> ReadName(const Field& object) {
  TF_ASSIGN_OR_RETURN(Field f, pack_json::Member(object, "name"));
  TF_ASSIGN_OR_RETURN(std::string name, pack_json::String(f));
  if (name.empty()) return f.Error("must not be empty");
  return name;
}

Result<ElemType> ReadElemType(const Field& f, bool image) {
  TF_ASSIGN_OR_RETURN(std::string s, image ? pack_json::OneOf(f, {"float32", "float16"})
                                           : pack_json::OneOf(f, {"float32", "float16", "int32"}));
  if (s == "float16") return ElemType::kFloat16;
  if (s == "int32") return ElemType::kInt32;
  return ElemType::kFloat32;
}

// Records a buffer or image name; names are unique across both.
Status Declare(const std::string& name, PackArg::Kind kind, const Field& where, MemoryKinds* kinds) {
  if (!kinds->emplace(name, kind).second) {
    return Status::Corruption(where.MemberPath("name") + ": " + pack_json::Describe(nlohmann::json(name)) +
                              " names another buffer or image");
  }
  return Status::OK();
}

Result<PackBuffer> ReadBuffer(const Field& f, MemoryKinds* kinds) {
  TF_RETURN_IF_ERROR(pack_json::RequireObject(f));
  PackBuffer b;
  TF_ASSIGN_OR_RETURN(b.name, ReadName(f));
  TF_ASSIGN_OR_RETURN(b.type, pack_json::MemberOr(f, "type", ElemType::kFloat32,
                                                  [](const Field& t) { return ReadElemType(t, false); }));
  TF_ASSIGN_OR_RETURN(Field count, pack_json::Member(f, "count"));
  TF_ASSIGN_OR_RETURN(b.count, pack_json::Unsigned(count, 0, kMaxElements));
  if (__builtin_mul_overflow(b.count, ElemBytes(b.type), &b.bytes)) return count.Error("the byte size overflows");
  TF_ASSIGN_OR_RETURN(std::string init, pack_json::MemberOr(f, "init", std::string("zeros"), [](const Field& i) {
                        return pack_json::OneOf(i, {"zeros", "random"});
                      }));
  b.random_init = init == "random";
  TF_RETURN_IF_ERROR(Declare(b.name, PackArg::Kind::kBuffer, f, kinds));
  return b;
}

// An RGBA image2d_t of float or half channels: what Build can create.
Result<PackImage> ReadImage(const Field& f, MemoryKinds* kinds) {
  TF_RETURN_IF_ERROR(pack_json::RequireObject(f));
  PackImage im;
  TF_ASSIGN_OR_RETURN(im.name, ReadName(f));
  TF_ASSIGN_OR_RETURN(im.type, pack_json::MemberOr(f, "type", ElemType::kFloat32,
                                                   [](const Field& t) { return ReadElemType(t, true); }));
  TF_ASSIGN_OR_RETURN(Field width, pack_json::Member(f, "width"));
  TF_ASSIGN_OR_RETURN(im.width, pack_json::Unsigned(width, 1, kMaxImageSide));
  TF_ASSIGN_OR_RETURN(Field height, pack_json::Member(f, "height"));
  TF_ASSIGN_OR_RETURN(im.height, pack_json::Unsigned(height, 1, kMaxImageSide));
  if (im.width * im.height > kMaxElements) {
    return f.Error("width x height must be at most " + std::to_string(kMaxElements) + " pixels");
  }
  TF_RETURN_IF_ERROR(Declare(im.name, PackArg::Kind::kImage, f, kinds));
  return im;
}

// A buffer or image argument must name memory of that kind.
Result<std::string> ReadMemoryName(const Field& f, PackArg::Kind kind, const MemoryKinds& kinds) {
  TF_ASSIGN_OR_RETURN(std::string name, pack_json::String(f));
  auto it = kinds.find(name);
  const char* what = kind == PackArg::Kind::kBuffer ? "a buffer" : "an image";
  if (it == kinds.end()) return f.Error("names no buffer or image of the program: " + pack_json::Describe(f.value()));
  if (it->second != kind) return f.Error(pack_json::Describe(f.value()) + " is not " + what + " of the program");
  return name;
}

Result<PackArg> ReadArg(const Field& f, const MemoryKinds& kinds) {
  if (!f.value().is_object() || f.value().size() != 1) {
    return f.Error("must be an object with one member: buffer, image, i32, f32 or local_bytes, got " +
                   pack_json::Describe(f.value()));
  }
  auto member = f.value().begin();
  const std::string& key = member.key();
  const Field value(member.value(), f.MemberPath(key));
  PackArg arg;
  if (key == "buffer" || key == "image") {
    arg.kind = key == "buffer" ? PackArg::Kind::kBuffer : PackArg::Kind::kImage;
    TF_ASSIGN_OR_RETURN(arg.name, ReadMemoryName(value, arg.kind, kinds));
  } else if (key == "i32") {
    arg.kind = PackArg::Kind::kI32;
    TF_ASSIGN_OR_RETURN(
        int64_t v, pack_json::Integer(value, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
    arg.i32 = static_cast<int32_t>(v);
  } else if (key == "f32") {
    arg.kind = PackArg::Kind::kF32;
    constexpr double kMaxFloat = std::numeric_limits<float>::max();
    TF_ASSIGN_OR_RETURN(double v, pack_json::Number(value, -kMaxFloat, kMaxFloat));
    arg.f32 = static_cast<float>(v);
  } else if (key == "local_bytes") {
    arg.kind = PackArg::Kind::kLocalBytes;
    TF_ASSIGN_OR_RETURN(arg.local_bytes, pack_json::Unsigned(value, 1, kMaxLocalBytes));
  } else {
    return f.Error("unknown argument kind " + pack_json::Describe(nlohmann::json(key)) +
                   " (expected buffer, image, i32, f32 or local_bytes)");
  }
  return arg;
}

// 1 to 3 dimensions of 1..2^32 work-items whose product fits a size_t.
Result<std::vector<uint64_t>> ReadGlobalSize(const Field& f) {
  TF_ASSIGN_OR_RETURN(std::vector<Field> dims, pack_json::Elements(f));
  if (dims.empty() || dims.size() > kMaxDims) {
    return f.Error("must have 1 to 3 dimensions, got " + std::to_string(dims.size()));
  }
  std::vector<uint64_t> out;
  size_t product = 1;
  for (const Field& d : dims) {
    TF_ASSIGN_OR_RETURN(uint64_t v, pack_json::Unsigned(d, 1, kMaxGlobalSize));
    if (v > std::numeric_limits<size_t>::max() || __builtin_mul_overflow(product, static_cast<size_t>(v), &product)) {
      return f.Error("the number of work-items overflows size_t");
    }
    out.push_back(v);
  }
  return out;
}

// Empty (the driver's choice), or one size per global dimension, each dividing it.
Result<std::vector<uint64_t>> ReadLocalSize(const Field& f, const std::vector<uint64_t>& global) {
  TF_ASSIGN_OR_RETURN(std::vector<Field> dims, pack_json::Elements(f));
  std::vector<uint64_t> out;
  if (dims.empty()) return out;
  if (dims.size() != global.size()) {
    return f.Error("must be empty or have as many dimensions as global_size (" + std::to_string(global.size()) +
                   "), got " + std::to_string(dims.size()));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    TF_ASSIGN_OR_RETURN(uint64_t v, pack_json::Unsigned(dims[i], 1, global[i]));
    if (global[i] % v != 0) {
      return dims[i].Error(std::to_string(v) + " does not divide global_size " + std::to_string(global[i]));
    }
    out.push_back(v);
  }
  return out;
}

Result<PackLaunch> ReadLaunch(const Field& f, const MemoryKinds& kinds) {
  TF_RETURN_IF_ERROR(pack_json::RequireObject(f));
  PackLaunch l;
  TF_ASSIGN_OR_RETURN(std::string phase, pack_json::MemberOr(f, "phase", std::string("timed"), [](const Field& p) {
                        return pack_json::OneOf(p, {"setup", "timed"});
                      }));
  l.setup = phase == "setup";
  TF_ASSIGN_OR_RETURN(Field entry, pack_json::Member(f, "entry"));
  TF_ASSIGN_OR_RETURN(l.entry, pack_json::String(entry));
  if (!IsIdentifier(l.entry)) {
    return entry.Error("must be an OpenCL C kernel name, got " + pack_json::Describe(entry.value()));
  }
  TF_ASSIGN_OR_RETURN(Field source, pack_json::Member(f, "source"));
  TF_ASSIGN_OR_RETURN(l.source, pack_json::String(source));
  if (l.source.empty()) return source.Error("must not be empty");
  TF_ASSIGN_OR_RETURN(l.build_options, pack_json::MemberOr(f, "build_options", std::string(), ReadString));
  TF_ASSIGN_OR_RETURN(l.args, ReadList<PackArg>(f, "args", [&kinds](const Field& a) { return ReadArg(a, kinds); }));
  TF_ASSIGN_OR_RETURN(Field global, pack_json::Member(f, "global_size"));
  TF_ASSIGN_OR_RETURN(l.global_size, ReadGlobalSize(global));
  if (std::optional<Field> local = pack_json::OptionalMember(f, "local_size")) {
    TF_ASSIGN_OR_RETURN(l.local_size, ReadLocalSize(*local, l.global_size));
  }
  return l;
}

Result<PackProgram> ReadProgram(const Field& f) {
  TF_RETURN_IF_ERROR(pack_json::RequireObject(f));
  PackProgram p;
  MemoryKinds kinds;
  TF_ASSIGN_OR_RETURN(p.buffers,
                      ReadList<PackBuffer>(f, "buffers", [&kinds](const Field& b) { return ReadBuffer(b, &kinds); }));
  TF_ASSIGN_OR_RETURN(p.images,
                      ReadList<PackImage>(f, "images", [&kinds](const Field& im) { return ReadImage(im, &kinds); }));
  TF_ASSIGN_OR_RETURN(Field launches, pack_json::Member(f, "launches"));
  TF_ASSIGN_OR_RETURN(p.launches,
                      ReadList<PackLaunch>(f, "launches", [&kinds](const Field& l) { return ReadLaunch(l, kinds); }));
  if (p.launches.empty()) return launches.Error("must hold at least one launch");
  TF_ASSIGN_OR_RETURN(Field output, pack_json::Member(f, "output_buffer"));
  TF_ASSIGN_OR_RETURN(p.output_buffer, ReadMemoryName(output, PackArg::Kind::kBuffer, kinds));
  return p;
}

// "op"/"precision" of an entry: optional, and when given equal to its task's.
Result<std::string> ReadTaskPart(const Field& entry, const std::string& key, const std::string& from_task) {
  std::optional<Field> f = pack_json::OptionalMember(entry, key);
  if (!f) return from_task;
  TF_ASSIGN_OR_RETURN(std::string v, pack_json::String(*f));
  if (v != from_task) {
    return f->Error(pack_json::Describe(f->value()) + " disagrees with the task's " + key + " \"" + from_task + "\"");
  }
  return v;
}

Result<PackedKernel> ReadEntry(const Field& e, bool fallback) {
  TF_RETURN_IF_ERROR(pack_json::RequireObject(e));
  PackedKernel k;
  TF_ASSIGN_OR_RETURN(Field task, pack_json::Member(e, "task"));
  TF_ASSIGN_OR_RETURN(k.task, pack_json::String(task));
  Result<SpecParts> parts = ParseTaskSpec(k.task);
  if (!parts.ok()) {
    return task.Error("must be a task spec op:v1,v2,...[,name=value...]:precision (" + parts.status().message() +
                      "), got " + pack_json::Describe(task.value()));
  }
  TF_ASSIGN_OR_RETURN(k.op, ReadTaskPart(e, "op", parts->op));
  TF_ASSIGN_OR_RETURN(k.precision, ReadTaskPart(e, "precision", parts->precision));
  TF_ASSIGN_OR_RETURN(Field tmpl, pack_json::Member(e, "template"));
  TF_ASSIGN_OR_RETURN(k.template_name, pack_json::String(tmpl));
  TF_ASSIGN_OR_RETURN(int64_t version, pack_json::MemberOr(e, "template_version", int64_t{0}, [](const Field& v) {
                        return pack_json::Integer(v, 0, std::numeric_limits<int>::max());
                      }));
  k.template_version = static_cast<int>(version);
  if (std::optional<Field> config = pack_json::OptionalMember(e, "config")) {
    TF_RETURN_IF_ERROR(pack_json::RequireObject(*config));
    k.config = config->value().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    k.config = "{}";
  }
  TF_ASSIGN_OR_RETURN(k.record_id, pack_json::MemberOr(e, "record_id", int64_t{0}, [](const Field& v) {
                        return pack_json::Integer(v, 0, std::numeric_limits<int64_t>::max());
                      }));
  auto non_negative = [](const Field& v) { return pack_json::Number(v, 0, std::numeric_limits<double>::max()); };
  TF_ASSIGN_OR_RETURN(k.latency_ms, pack_json::MemberOr(e, "latency_ms", 0.0, non_negative));
  TF_ASSIGN_OR_RETURN(k.gflops, pack_json::MemberOr(e, "gflops", 0.0, non_negative));
  k.fallback = fallback;
  TF_ASSIGN_OR_RETURN(Field program, pack_json::Member(e, "program"));
  // An entry the exporter fingerprinted: its program as written (a source edited by hand could index past the
  // buffers). Packs of before the fingerprint, and entries written by hand without one, are read as they are.
  if (std::optional<Field> fnv = pack_json::OptionalMember(e, kProgramFingerprintKey)) {
    TF_ASSIGN_OR_RETURN(std::string written, pack_json::String(*fnv));
    if (written != ProgramFingerprint(program.value())) {
      return fnv->Error(pack_json::Describe(fnv->value()) + " is not the program's fingerprint \"" +
                        ProgramFingerprint(program.value()) + "\": the program was edited or is damaged (an " +
                        "entry without " + kProgramFingerprintKey + " and " + kEntryFingerprintKey +
                        " is read as it is)");
    }
  }
  // Its task and template too (a program relabelled for another workload would compute a corner of it).
  if (std::optional<Field> fnv = pack_json::OptionalMember(e, kEntryFingerprintKey)) {
    TF_ASSIGN_OR_RETURN(std::string written, pack_json::String(*fnv));
    const std::string computed = EntryFingerprint(k.task, k.template_name, program.value());
    if (written != computed) {
      return fnv->Error(pack_json::Describe(fnv->value()) + " is not the entry's fingerprint \"" + computed +
                        "\": its task, template or program was edited or is damaged (an entry without " +
                        kProgramFingerprintKey + " and " + kEntryFingerprintKey + " is read as it is)");
    }
  }
  TF_ASSIGN_OR_RETURN(k.program, ReadProgram(program));
  return k;
}

// Entry `e` of "kernels"/"fallbacks" as messages name it: its index, and its task when that is valid.
std::string EntryName(const Field& e) {
  std::optional<Field> task = pack_json::OptionalMember(e, "task");
  if (!task || !task->value().is_string()) return e.path();
  const std::string& spec = task->value().get_ref<const std::string&>();
  return ParseTaskSpec(spec).ok() ? e.path() + " (" + spec + ")" : e.path();
}

// The optional array member `key` ("kernels"/"fallbacks"); errors are put in the context of their entry.
Result<std::vector<PackedKernel>> ReadEntries(const Field& root, const std::string& key, bool fallback) {
  return ReadList<PackedKernel>(root, key, [fallback](const Field& e) -> Result<PackedKernel> {
    Result<PackedKernel> k = ReadEntry(Field(e.value(), ""), fallback);
    if (!k.ok()) return k.status().WithContext(EntryName(e));
    return k;
  });
}

Result<PackDevice> ReadDevice(const Field& root) {
  TF_ASSIGN_OR_RETURN(Field d, pack_json::Member(root, "device"));
  TF_RETURN_IF_ERROR(pack_json::RequireObject(d));
  PackDevice device;
  const std::string none;
  TF_ASSIGN_OR_RETURN(device.name, pack_json::MemberOr(d, "name", none, ReadString));
  TF_ASSIGN_OR_RETURN(device.vendor, pack_json::MemberOr(d, "vendor", none, ReadString));
  TF_ASSIGN_OR_RETURN(device.driver, pack_json::MemberOr(d, "driver", none, ReadString));
  TF_ASSIGN_OR_RETURN(device.opencl_version, pack_json::MemberOr(d, "opencl_version", none, ReadString));
  TF_ASSIGN_OR_RETURN(device.fingerprint, pack_json::MemberOr(d, "fingerprint", none, ReadString));
  return device;
}

// The optional "spec_extras": {op: {parameter: {"default": integer, "names": [name...]}}}.
Result<std::map<std::string, OpExtras>> ReadSpecExtras(const Field& root) {
  std::map<std::string, OpExtras> out;
  std::optional<Field> all = pack_json::OptionalMember(root, "spec_extras");
  if (!all) return out;
  TF_RETURN_IF_ERROR(pack_json::RequireObject(*all));
  for (const auto& [op, params] : all->value().items()) {
    const Field op_field(params, all->MemberPath(op));
    if (!IsIdentifier(op)) return op_field.Error("is not an op name");
    TF_RETURN_IF_ERROR(pack_json::RequireObject(op_field));
    OpExtras& extras = out[op];
    for (const auto& [name, desc] : params.items()) {
      const Field param(desc, op_field.MemberPath(name));
      if (!IsIdentifier(name)) return param.Error("is not a parameter name");
      TF_RETURN_IF_ERROR(pack_json::RequireObject(param));
      ExtraSpec spec;
      TF_ASSIGN_OR_RETURN(Field def, pack_json::Member(param, "default"));
      TF_ASSIGN_OR_RETURN(spec.default_value, pack_json::Integer(def, 0, std::numeric_limits<int64_t>::max()));
      TF_ASSIGN_OR_RETURN(spec.names, ReadList<std::string>(param, "names", [](const Field& n) -> Result<std::string> {
                            TF_ASSIGN_OR_RETURN(std::string v, pack_json::String(n));
                            if (!IsIdentifier(v)) return n.Error("is not a name");
                            return v;
                          }));
      extras.emplace(name, std::move(spec));
    }
  }
  return out;
}

// What no single entry shows: two entries of one list with the same task and template (Find would take either);
// entries of one op with different numbers of sizes (an op takes a fixed number); and, for an op the pack
// describes, a task spec not in the tuner's form: a named parameter the op does not take, or one written although
// it is the default or by number where it has a name (Find, which reads workloads in that form, would never match
// it). The messages name the entry as Parse's do: "kernels[3] (gemm:64,64,64:float32)".
Status CheckEntries(const std::vector<PackedKernel>& kernels, const std::vector<PackedKernel>& fallbacks,
                    const std::map<std::string, OpExtras>& spec_extras) {
  std::map<std::string, std::pair<size_t, std::string>> sizes_of_op;  // op: its sizes, and the entry that says so
  for (const auto& [list, entries] : {std::pair<const char*, const std::vector<PackedKernel>*>{"kernels", &kernels},
                                      {"fallbacks", &fallbacks}}) {
    std::map<std::pair<std::string, std::string>, size_t> seen;  // (task, template): index
    for (size_t i = 0; i < entries->size(); ++i) {
      const PackedKernel& k = (*entries)[i];
      const std::string name = std::string(list) + "[" + std::to_string(i) + "] (" + k.task + ")";
      auto [at, added] = seen.emplace(std::make_pair(k.task, k.template_name), i);
      if (!added) {
        return Status::Corruption(name + ": the same task and template as " + list + "[" +
                                  std::to_string(at->second) + "]: an entry given twice");
      }
      Result<SpecParts> parts = ParseTaskSpec(k.task);  // checked by ReadEntry: never fails here
      if (!parts.ok()) return parts.status().WithContext(name);
      auto [op_at, first] = sizes_of_op.emplace(k.op, std::make_pair(parts->sizes.size(), name));
      if (!first && op_at->second.first != parts->sizes.size()) {
        return Status::Corruption(name + ": " + std::to_string(parts->sizes.size()) + " sizes, where " +
                                  op_at->second.second + " has " + std::to_string(op_at->second.first) +
                                  " (an op takes a fixed number)");
      }
      const auto described = spec_extras.find(k.op);
      if (described == spec_extras.end()) continue;
      for (const auto& [param, value] : parts->extras) {
        if (described->second.count(param) == 0) {
          return Status::Corruption(name + ": " + k.op + " takes no parameter '" + param + "' (spec_extras)");
        }
      }
      if (Canonical(*parts, described->second).extras != parts->extras) {
        return Status::Corruption(name + ": a named parameter is not written as the tuner writes it (a default "
                                  "left out, a value by its name: spec_extras)");
      }
    }
  }
  return Status::OK();
}

// "format" must be the kernel pack's string and "version" the integer 1.
Status CheckHeader(const Field& root, const std::string& source) {
  std::optional<Field> format = pack_json::OptionalMember(root, "format");
  if (!format || format->value() != kFormat) {
    return Status::InvalidArgument(source + ": not a tunefleet kernel pack (format " +
                                   (format ? pack_json::Describe(format->value()) : "missing") + ")");
  }
  std::optional<Field> version = pack_json::OptionalMember(root, "version");
  if (!version || !version->value().is_number_integer()) {
    return Status::InvalidArgument(source + ": kernel pack version must be an integer, got " +
                                   (version ? pack_json::Describe(version->value()) : "none"));
  }
  if (!version->value().is_number_unsigned() || version->value().get<uint64_t>() != kVersion) {
    return Status::InvalidArgument(source + ": kernel pack version " + pack_json::Describe(version->value()) +
                                   " is not supported (expected " + std::to_string(kVersion) + ")");
  }
  return Status::OK();
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
  TF_ASSIGN_OR_RETURN(std::string text, ReadPackFile(path, kMaxFileBytes));
  return Parse(text, path);
}

Result<KernelPack> KernelPack::Parse(const std::string& json_text, const std::string& source) {
  Result<nlohmann::json> parsed = pack_json::ParseBounded(json_text);
  if (!parsed.ok()) return parsed.status().WithContext(source);
  const Field root(*parsed, "");
  if (!root.value().is_object()) return Status::Corruption(source + ": not a JSON object");
  TF_RETURN_IF_ERROR(CheckHeader(root, source));
  KernelPack pack;
  Status s = [&]() -> Status {
    TF_ASSIGN_OR_RETURN(pack.device_, ReadDevice(root));
    TF_ASSIGN_OR_RETURN(pack.kernels_, ReadEntries(root, "kernels", false));
    TF_ASSIGN_OR_RETURN(pack.fallbacks_, ReadEntries(root, "fallbacks", true));
    TF_ASSIGN_OR_RETURN(pack.spec_extras_, ReadSpecExtras(root));
    return CheckEntries(pack.kernels_, pack.fallbacks_, pack.spec_extras_);
  }();
  if (!s.ok()) return s.WithContext(source + ": malformed kernel pack");
  return pack;
}

Result<PackMatch> KernelPack::Find(const std::string& task_spec) const {
  // The workload is read as strictly as the pack's own specs: "gemm:064,64,64" or "gemm:64, 64,64" read leniently
  // would be taken for the 64^3 kernel, a kernel built for another workload than the one the application has.
  Result<SpecParts> parsed = ParseWorkload(task_spec);
  if (!parsed.ok()) {
    return Status::InvalidArgument("workload " + pack_json::Describe(nlohmann::json(task_spec)) +
                                   " is not a task spec op:v1,v2,...[,name=value...][:precision] (" +
                                   parsed.status().message() + ")");
  }
  // "gemm:64,64,64,batch=1" is the kernel of "gemm:64,64,64:float32": the pack's specs leave defaults out.
  const auto described = spec_extras_.find(parsed->op);
  const SpecParts want = described == spec_extras_.end() ? *parsed : Canonical(*parsed, described->second);
  // A workload the op cannot be ("gemm:64", a parameter gemm does not take) is not answered by the nearest or the
  // fallback kernel: those are for other workloads of the op.
  auto refused = [&](const std::string& why) {
    return Status::InvalidArgument("workload " + pack_json::Describe(nlohmann::json(task_spec)) + " " + why);
  };
  if (described != spec_extras_.end()) {
    for (const auto& [param, value] : want.extras) {
      if (described->second.count(param) == 0) return refused("names '" + param + "', which " + want.op +
                                                               " does not take (the pack's spec_extras)");
    }
  }
  for (const std::vector<PackedKernel>* entries : {&kernels_, &fallbacks_}) {
    for (const auto& k : *entries) {
      if (k.op != want.op) continue;
      Result<SpecParts> have = ParseTaskSpec(k.task);  // checked by Parse: never fails here
      if (have.ok() && have->sizes.size() != want.sizes.size()) {
        return refused("has " + std::to_string(want.sizes.size()) + " sizes; " + want.op + " takes " +
                       std::to_string(have->sizes.size()) + " (" + k.task + ")");
      }
      break;  // Parse checked that every entry of an op has as many sizes
    }
  }
  // A workload tuned under several templates has a kernel of each (the fastest config of each template); the
  // fastest of them is the one to run, whichever the pack lists first. A kernel without a latency (a pack written
  // by hand) comes after those with one.
  auto latency = [](const PackedKernel& k) {
    return k.latency_ms > 0 ? k.latency_ms : std::numeric_limits<double>::infinity();
  };
  const PackedKernel* exact = nullptr;
  const PackedKernel* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& k : kernels_) {
    if (k.op != want.op || k.precision != want.precision) continue;
    Result<SpecParts> have = ParseTaskSpec(k.task);  // checked by Parse: never fails here
    if (!have.ok()) continue;
    if (have->sizes == want.sizes && have->extras == want.extras) {
      if (exact == nullptr || latency(k) < latency(*exact)) exact = &k;
      continue;
    }
    const double d = Distance(want, *have);
    if (d < best || (d == best && nearest != nullptr && latency(k) < latency(*nearest))) {
      best = d;
      nearest = &k;
    }
  }
  if (exact) return PackMatch{exact, MatchKind::kExact};
  if (nearest) return PackMatch{nearest, MatchKind::kNearest};
  // A fallback computes what its own workload's named parameters say (a transposed B, a fused bias, a dilation):
  // only one whose parameters are the workload's will do.
  for (const auto& k : fallbacks_) {
    if (k.op != want.op || k.precision != want.precision) continue;
    Result<SpecParts> have = ParseTaskSpec(k.task);  // checked by Parse: never fails here
    if (have.ok() && have->extras == want.extras) return PackMatch{&k, MatchKind::kFallback};
  }
  std::string named;
  for (const auto& [name, value] : want.extras) named += (named.empty() ? " with " : ",") + name + "=" + value;
  return Status::NotFound("kernel pack has no " + want.op + " kernel for " + want.precision + named + " (" +
                          task_spec + ")");
}

}  // namespace tunefleet::runtime

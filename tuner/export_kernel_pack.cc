#include "tuner/export_kernel_pack.h"

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "common/atomic_file.h"
#include "common/fnv_hash.h"
#include "common/json_parse.h"
#include "common/printable.h"
#include "deploy/runtime/pack_fingerprint.h"
#include "search-spaces/device_limits.h"
#include "search-spaces/op_signature.h"
#include "tuner/export_source.h"

namespace tunefleet {
namespace {

const char* TypeName(proto::ElemType t) {
  switch (t) {
    case proto::FLOAT16: return "float16";
    case proto::INT32: return "int32";
    default: return "float32";
  }
}

std::string FileStem(const proto::DeviceInfo& info) {
  std::string stem;
  for (char c : info.name()) stem += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  if (stem.empty()) stem = "device";
  stem += "-";
  for (char c : info.fingerprint().substr(0, 12)) stem += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return stem;
}

// The named parameters of `task` that differ from their defaults, as its spec writes them ("transb=1,act=relu").
std::string NamedParams(const Task& task) {
  const std::string spec = task.ToSpec();
  const size_t a = spec.find(':'), b = spec.rfind(':');
  std::string named;
  std::istringstream in(spec.substr(a + 1, b - a - 1));
  for (std::string tok; std::getline(in, tok, ',');) {
    if (tok.find('=') != std::string::npos) named += (named.empty() ? "" : ",") + tok;
  }
  return named;
}

// The pack's description of an op's named parameters ("spec_extras"), from the op's signature.
nlohmann::json SpecExtras(const std::string& op) {
  nlohmann::json params = nlohmann::json::object();
  if (const OpSignature* sig = FindOpSignature(op)) {
    for (const ParamSpec& p : sig->extras) {
      params[p.name] = {{"default", p.default_value}};
      if (!p.symbols.empty()) params[p.name]["names"] = p.symbols;
    }
  }
  return params;
}

// A program in the pack's JSON form (launches, buffers, images, output; no reference, no timing).
nlohmann::json ProgramToPackJson(const proto::KernelProgram& p);

// An entry: the workload, the template, the config and the regenerated program.
Result<nlohmann::json> Entry(const Template& tmpl, const Task& task, const Space& space, const Config& config) {
  TF_ASSIGN_OR_RETURN(proto::KernelProgram program, tmpl.Generate(task, space, config));
  nlohmann::json packed = ProgramToPackJson(program);
  const std::string fingerprint = runtime::ProgramFingerprint(packed);
  const std::string entry_fingerprint = runtime::EntryFingerprint(task.ToSpec(), tmpl.name(), packed);
  return nlohmann::json{{"task", task.ToSpec()},
                        {"op", task.op},
                        {"precision", PrecisionName(task.precision)},
                        {"template", tmpl.name()},
                        {"template_version", tmpl.version()},
                        {"config", space.ToJson(config)},
                        {"program", std::move(packed)},
                        {runtime::kProgramFingerprintKey, fingerprint},
                        {runtime::kEntryFingerprintKey, entry_fingerprint}};
}


nlohmann::json ProgramToPackJson(const proto::KernelProgram& p) {
  nlohmann::json buffers = nlohmann::json::array(), images = nlohmann::json::array(),
                 launches = nlohmann::json::array();
  for (const auto& b : p.buffers()) {
    buffers.push_back({{"name", b.name()},
                       {"type", TypeName(b.type())},
                       {"count", b.count()},
                       // An output the tuner filled with NaN to check it is written whole needs no fill in an
                       // application: "zeros", as the runtime knows it.
                       {"init", b.init() == proto::BufferSpec::RANDOM ? "random" : "zeros"}});
  }
  for (const auto& im : p.images()) {
    images.push_back(
        {{"name", im.name()}, {"type", TypeName(im.type())}, {"width", im.width()}, {"height", im.height()}});
  }
  for (const auto& l : p.launches()) {
    nlohmann::json args = nlohmann::json::array();
    for (const auto& a : l.args()) {
      switch (a.value_case()) {
        case proto::KernelArg::kBuffer: args.push_back({{"buffer", a.buffer()}}); break;
        case proto::KernelArg::kImage: args.push_back({{"image", a.image()}}); break;
        case proto::KernelArg::kI32: args.push_back({{"i32", a.i32()}}); break;
        case proto::KernelArg::kF32: args.push_back({{"f32", a.f32()}}); break;
        case proto::KernelArg::kLocalBytes: args.push_back({{"local_bytes", a.local_bytes()}}); break;
        case proto::KernelArg::VALUE_NOT_SET: args.push_back({{"i32", 0}}); break;
      }
    }
    launches.push_back({{"phase", l.phase() == proto::KernelLaunch::SETUP ? "setup" : "timed"},
                        {"entry", l.entry()},
                        {"source", l.source()},
                        {"build_options", l.build_options()},
                        {"args", args},
                        {"global_size", std::vector<uint64_t>(l.global_size().begin(), l.global_size().end())},
                        {"local_size", std::vector<uint64_t>(l.local_size().begin(), l.local_size().end())}});
  }
  return {{"buffers", buffers}, {"images", images}, {"launches", launches}, {"output_buffer", p.output_buffer()}};
}

}  // namespace

Result<std::vector<KernelPackFile>> BuildKernelPacks(TuningLog& log, const TemplateLookup& lookup_in,
                                                     std::ostream& notes) {
  TemplateLookup lookup = lookup_in ? lookup_in : [](const std::string& n) { return FindTemplate(n); };
  TF_ASSIGN_OR_RETURN(auto items, CollectExportItems(log, /*best_only=*/true, lookup, notes));
  std::map<std::string, KernelPackFile> packs;  // by fingerprint
  std::map<std::string, std::set<std::string>> fallback_done;
  for (const ExportItem& it : items) {
    auto skip = [&](const std::string& why) {
      notes << "skipped " << Printable(it.task.spec) << " (" << Printable(it.tmpl.name) << ") on "
            << Printable(it.device.name) << ": " << Printable(why) << "\n";
    };
    const Template* tmpl = lookup(it.tmpl.name);
    if (!tmpl) {
      skip("template is not built into this tunefleet");
      continue;
    }
    if (std::string other = OtherTemplateVersion(it, tmpl->version()); !other.empty()) {
      skip(other);
      continue;
    }
    auto task = Task::Parse(it.task.spec);
    if (!task.ok()) {
      skip(task.status().message());
      continue;
    }
    auto space = tmpl->MakeSpace(*task, DeviceLimits::From(it.info));
    if (!space.ok()) {
      skip(space.status().message());
      continue;
    }
    auto config = space->FromJson(ParseJson(it.record.config));
    if (!config.ok()) {
      skip(config.status().message());
      continue;
    }
    auto entry = Entry(*tmpl, *task, *space, *config);
    if (!entry.ok()) {
      skip(entry.status().message());
      continue;
    }
    (*entry)["record_id"] = it.record.id;
    (*entry)["latency_ms"] = it.record.mean_cost * 1e3;
    (*entry)["gflops"] = it.record.mean_cost > 0 ? it.task.flops / it.record.mean_cost / 1e9 : 0;

    KernelPackFile& pack = packs[it.device.fingerprint];
    if (pack.pack.is_null()) {
      pack.stem = FileStem(it.info);
      pack.pack = {{"format", "tunefleet-kernel-pack"},
                   {"version", 1},
                   {"device",
                    {{"name", it.info.name()},
                     {"vendor", it.info.vendor()},
                     {"driver", it.info.driver_version()},
                     {"opencl_version", it.info.device_version()},
                     {"fingerprint", it.device.fingerprint}}},
                   {"kernels", nlohmann::json::array()},
                   {"fallbacks", nlohmann::json::array()},
                   {"spec_extras", nlohmann::json::object()}};
    }
    pack.pack["kernels"].push_back(std::move(*entry));
    if (!pack.pack["spec_extras"].contains(task->op)) pack.pack["spec_extras"][task->op] = SpecExtras(task->op);
    // One fallback per (op, template, precision, named parameters): the template's untuned config, built for this
    // workload. A fallback computes what its named parameters say (a transposed B, a fused bias), so a workload
    // is given one only of its own parameters.
    const std::string fb_key =
        task->op + "|" + tmpl->name() + "|" + PrecisionName(task->precision) + "|" + NamedParams(*task);
    if (fallback_done[it.device.fingerprint].insert(fb_key).second) {
      auto fallback = Entry(*tmpl, *task, *space, tmpl->Fallback(*task, *space));
      if (fallback.ok()) {
        pack.pack["fallbacks"].push_back(std::move(*fallback));
      } else {
        notes << "no fallback for " << tmpl->name() << ": " << fallback.status().message() << "\n";
      }
    }
  }
  // Two device models can share a stem (the same name and fingerprint prefix: AutoTVM targets imported with one
  // `-device` all begin "autotvm:open"); each of those gets a hash of its whole fingerprint, so that no pack is
  // written over another.
  std::map<std::string, int> stems;
  for (const auto& [fp, pack] : packs) ++stems[pack.stem];
  std::vector<KernelPackFile> out;
  for (auto& [fp, pack] : packs) {
    if (stems[pack.stem] > 1) pack.stem += "-" + FnvHash().Add(fp).Hex();
    out.push_back(std::move(pack));
  }
  return out;
}

Result<std::vector<std::string>> WriteKernelPacks(const std::vector<KernelPackFile>& packs, const std::string& out) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code ec;
  const bool single_file = packs.size() == 1 && !fs::is_directory(out, ec) && !out.empty() && out.back() != '/';
  if (!single_file) {
    fs::create_directories(out, ec);
    if (ec) return Status::IOError(out + ": cannot create directory: " + ec.message());
  }
  for (const auto& p : packs) {
    std::string path = single_file ? out : (fs::path(out) / (p.stem + ".json")).string();
    TF_RETURN_IF_ERROR(WriteFileAtomically(path, [&](std::ostream& f) {
      f << p.pack.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return Status::OK();
    }));
    paths.push_back(path);
  }
  return paths;
}

}  // namespace tunefleet

// `tunefleet measure`: measure one kernel program on a device of a key — a template's config
// (--task/--config) or a hand-edited program (--program FILE.json). For debugging kernels and for the
// end-to-end tests of the status codes; nothing is recorded.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "common/cli_checks.h"
#include "common/json_parse.h"
#include "common/pem_check.h"
#include "common/printable.h"
#include "common/seconds.h"
#include "proto/program_checks.h"
#include "search-spaces/template.h"
#include "tuner/command.h"
#include "tuner/measure_session.h"
#include "tuner/run_session.h"
#include "tuner/tune_run.h"
#include "tuner/stop_signals.h"

namespace tunefleet {
namespace {

// The exit code of a program that was measured and failed (its status and message are in the printed result).
constexpr int kMeasuredButFailed = 3;

struct MeasureArgs {
  std::string tracker = "127.0.0.1:9190";
  std::string key;
  std::string token;
  std::string tls_ca;           // PEM roots: connect to the tracker with TLS
  std::string task_spec;
  std::string template_name;
  std::string config;         // JSON; empty = the template's fallback
  std::string program_file;   // KernelProgram in protobuf JSON form
  bool dump_program = false;  // print the program instead of measuring (no tracker needed)
  double wait = 30;
  uint32_t number = 2, repeat = 2;
};

Result<proto::KernelProgram> ProgramFromFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    return Status::InvalidArgument(path + ": not a file");  // a directory, or /dev/zero read for ever
  }
  errno = 0;
  std::ifstream in(path);
  if (!in) return Status::IOError("cannot read " + path + (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
  std::stringstream ss;
  ss << in.rdbuf();
  proto::KernelProgram p;
  auto st = google::protobuf::util::JsonStringToMessage(ss.str(), &p);
  if (!st.ok()) {
    std::string why(st.message());  // protobuf's message quotes the text with a caret line under it: one line
    for (char& c : why) c = c == '\n' ? ' ' : c;
    return Status::InvalidArgument(path + ": not a kernel program: " + why);
  }
  // The agent refuses these too (as a failed measurement); here they get one line before a device is asked for.
  if (!HasTimedLaunch(p)) return Status::InvalidArgument(path + ": " + kNoTimedLaunch);
  if (std::string problem = StructureProblem(p); !problem.empty()) {
    return Status::InvalidArgument(path + ": " + problem);
  }
  return p;
}

// `device_name` names the device of `limits` in a refusal.
Result<proto::KernelProgram> ProgramFromTemplate(const MeasureArgs& a, const DeviceLimits& limits,
                                                 const std::string& device_name) {
  TF_ASSIGN_OR_RETURN(Task task, Task::Parse(a.task_spec));
  std::string why;
  const nlohmann::json config = a.config.empty() ? nlohmann::json() : ParseJson(a.config, &why);
  if (config.is_discarded()) return Status::InvalidArgument("--config is " + why + ": " + Printable(a.config));
  const Template* tmpl = nullptr;
  if (!a.template_name.empty()) {
    TF_ASSIGN_OR_RETURN(tmpl, LookUpTemplate(a.template_name));
  } else {
    // The first template that runs the task on this device and, with --config, whose knobs the config names, of
    // those whose space takes the config here when there is one (the check before the lease took any of them).
    std::string first_misfit;
    for (const auto& t : AllTemplates()) {
      if (!t->Supports(task, limits, nullptr)) continue;
      if (!a.config.empty()) {
        Result<Space> space = t->MakeSpace(task, limits);
        Result<Config> fits = space.ok() ? space->FromJson(config) : Result<Config>(space.status());
        if (!fits.ok()) {
          if (first_misfit.empty()) first_misfit = t->name() + ": " + fits.status().message();
          continue;
        }
        if (tmpl == nullptr) tmpl = t.get();  // its rejection is said below, unless another takes the config
        if (!space->Check(*fits).empty()) continue;
      }
      tmpl = t.get();
      break;
    }
    if (tmpl == nullptr && first_misfit.empty()) return NoTemplateRuns(task, limits, device_name);  // as `tune`
    if (tmpl == nullptr) {
      return Status::InvalidArgument("--config fits no template that can run " + task.ToSpec() + " here (" +
                                     first_misfit + ")");
    }
  }
  TF_ASSIGN_OR_RETURN(Space space, tmpl->MakeSpace(task, limits));
  Config c = tmpl->Fallback(task, space);
  if (!a.config.empty()) {
    TF_ASSIGN_OR_RETURN(c, space.FromJson(config));
  }
  if (std::string rejected = space.Check(c); !rejected.empty()) {
    return Status::InvalidArgument("config rejected before compiling: " + rejected);
  }
  return tmpl->Generate(task, space, c);
}

int Run(const MeasureArgs& a) {
  // stdout is the result's JSON alone: the session's lines (waiting for a device, a stop) go to stderr, so that
  // `measure ... | jq` reads what it expects however the wait went.
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  if (a.task_spec.empty() == a.program_file.empty())
    return CommandError("measure", "give exactly one of --task or --program", 2);
  if (!a.program_file.empty() && (!a.config.empty() || !a.template_name.empty()))
    return CommandError("measure", "--config and --template apply to --task; a --program is measured as it is", 2);
  if (a.dump_program) {
    DeviceLimits generic;  // generic limits: the program is for inspection or editing
    generic.max_work_group_size = 1024;
    for (auto& s : generic.max_work_item_sizes) s = 1024;
    generic.local_mem_bytes = 48 * 1024;
    generic.image_support = true;
    generic.image2d_max_width = generic.image2d_max_height = 16384;
    generic.fp16 = true;
    // A --config is dumped as given (a device's limits judge it when it is measured): one that a 4096-item device
    // had measured was refused against the generic device's 1024. Without one, the fallback is for the generic
    // device.
    const DeviceLimits limits = a.config.empty() ? generic : DeviceLimits::Unbounded();
    const char* device = a.config.empty() ? "the generic device of --dump-program" : "any device";
    auto p = a.program_file.empty() ? ProgramFromTemplate(a, limits, device)
                                    : ProgramFromFile(a.program_file);
    if (!p.ok()) return CommandError("measure", p.status().message(), 2);
    std::string out;
    google::protobuf::util::JsonPrintOptions opts;
    opts.add_whitespace = true;
    (void)google::protobuf::util::MessageToJsonString(*p, &out, opts);
    std::cout << out;
    return 0;
  }
  if (a.key.empty()) return CommandError("measure", "--rpc-key is required", 2);
  // What can be checked without a device is checked before the tracker is asked for one.
  if (!a.task_spec.empty()) {
    Result<Task> task = Task::Parse(a.task_spec);
    if (!task.ok()) return CommandError("measure", task.status().message(), 2);
    if (Status fit = CheckSomeDeviceRuns({{*task, 1, ""}}, a.template_name); !fit.ok())
      return CommandError("measure", fit.message(), 2);
    std::string why;
    const nlohmann::json config = a.config.empty() ? nlohmann::json() : ParseJson(a.config, &why);
    if (config.is_discarded()) return CommandError("measure", "--config is " + why + ": " + Printable(a.config), 2);
    // The config's knobs and values are known before a device is (its limits are checked after): with --template,
    // that template's; without, those of some template that can run the task.
    if (!a.config.empty()) {
      std::vector<const Template*> candidates;
      if (!a.template_name.empty()) {
        candidates.push_back(LookUpTemplate(a.template_name).value());
      } else {
        for (const auto& t : AllTemplates())
          if (t->Supports(*task, DeviceLimits::Unbounded(), nullptr)) candidates.push_back(t.get());
      }
      std::string first_error, first_rejection;
      bool fits = candidates.empty(), passes = candidates.empty();
      for (const Template* t : candidates) {
        Result<Space> space = t->MakeSpace(*task, DeviceLimits::Unbounded());
        if (!space.ok()) {  // not judged here: the device's limits decide
          fits = passes = true;
          continue;
        }
        Result<Config> c = space->FromJson(config);
        fits = fits || c.ok();
        if (!c.ok() && first_error.empty()) first_error = c.status().message();
        if (!c.ok()) continue;
        // A config rejected on a device that lacks nothing (a tile larger than the task) is rejected on every one:
        // said now, not after a device was waited for and leased.
        const std::string rejected = space->Check(*c);
        passes = passes || rejected.empty();
        if (!rejected.empty() && first_rejection.empty()) first_rejection = rejected;
      }
      if (!fits) {
        return CommandError("measure", (candidates.size() > 1 ? "--config fits no template of the task (" +
                                                                     candidates.front()->name() + ": " + first_error +
                                                                     ")"
                                                               : first_error),
                            2);
      }
      if (!passes) {
        return CommandError("measure", "config rejected before compiling, on any device: " + first_rejection, 2);
      }
    }
  }
  proto::KernelProgram program;
  if (!a.program_file.empty()) {
    auto p = ProgramFromFile(a.program_file);
    if (!p.ok()) return CommandError("measure", p.status().message(), 2);
    program = std::move(p).value();
  }
  // Read now, as `query` reads it: a file that holds no certificate is bad input.
  if (!a.tls_ca.empty()) {
    if (Result<std::string> pem = ReadPemCertificates(a.tls_ca); !pem.ok())
      return CommandError("measure", pem.status().message(), 2);
  }
  SessionOptions so;
  so.tracker = a.tracker;
  so.key = a.key;
  so.token = a.token;
  so.tls_ca_file = a.tls_ca;
  so.wait = a.wait;
  so.device_wait = a.wait;
  so.device_wait_option = "--wait";
  so.client = RunHolder("measure");  // "tunefleet measure pid N@host", as tune names itself to those who wait
  // SIGINT/SIGTERM abandon the job and release the lease at once (exit 130), as in `tune`. Set up before the
  // session starts any thread.
  StopOnSignals signals(std::chrono::milliseconds(1000), "a job in flight is abandoned and a lease held is released");
  so.stop = signals.token();
  auto interrupted = [&] {
    std::cerr << "tunefleet measure: interrupted by " << signals.signal_name() << "; nothing was measured\n";
    return 130;
  };
  auto session = MeasureSession::Open(so);
  if (!session.ok() && signals.stop_requested()) return interrupted();
  if (!session.ok()) return CommandError("measure", session.status().message(), 1);
  if (!a.task_spec.empty()) {
    const proto::DeviceInfo& device = (*session)->devices().front().device();
    auto p = ProgramFromTemplate(a, DeviceLimits::From(device), Printable(device.name()));
    if (!p.ok()) return CommandError("measure", p.status().message(), 2);
    program = std::move(p).value();
  }
  if (program.timing().repeat() == 0) {
    program.mutable_timing()->set_number(a.number);
    program.mutable_timing()->set_repeat(a.repeat);
  }
  proto::MeasureResult result;
  std::string fingerprint;
  Status st = (*session)->Measure({&program}, [&](size_t, const proto::MeasureResult& r, const std::string& fp) {
    result = r;
    fingerprint = fp;
    return Status::OK();
  });
  if (signals.stop_requested()) return interrupted();  // the session's destructor releases the lease
  if (!st.ok()) return CommandError("measure", st.message(), 1);
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.always_print_primitive_fields = true;
  opts.always_print_enums_as_ints = true;
  (void)google::protobuf::util::MessageToJsonString(result, &out, opts);
  // Which device measured it, as the tuning log would name it: a result of a key of several device models is read
  // for the one that ran it.
  // Appended, so that the result's own fields keep their order ({"status":0,... first).
  if (!out.empty() && out.back() == '}') {
    auto quoted = [](const std::string& s) {
      return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    out.pop_back();
    out += ",\"deviceName\":" + quoted((*session)->devices().front().device().name()) +
           ",\"deviceFingerprint\":" + quoted(fingerprint) + "}";
  }
  std::cout << out << "\n";
  // The result is printed either way; a script that checks the exit code alone must not take a kernel that did
  // not build, crashed or computed the wrong answer for a measurement (exit 0 said so).
  return result.status() == proto::OK ? 0 : kMeasuredButFailed;
}

}  // namespace

void RegisterMeasure(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<MeasureArgs>();
  auto* sub = app.add_subcommand("measure",
                                 "Measure one kernel program on a device of a key (nothing is recorded); prints the "
                                 "result as JSON, exit 0 when its status is 0 (ok), 3 when the program was measured "
                                 "and failed (its status and message say how)");
  sub->add_option("--rpc-tracker", a->tracker, "Tracker address host:port (default 127.0.0.1:9190)")
      ->check(cli::HostPort());
  sub->add_option("--rpc-key", a->key, "Device key")->check(cli::DeviceKey());
  sub->add_option("--token", a->token, "Shared token of the tracker")
      ->envname("TUNEFLEET_TOKEN")
      ->check(cli::NotEmpty());
  sub->add_option("--tls-ca", a->tls_ca, "PEM root certificates: connect to the tracker with TLS")
      ->check(CLI::ExistingFile);
  sub->add_option("--task", a->task_spec, "Task spec; the program is generated by its template")
      ->check(cli::NotEmpty());
  sub->add_option("--template", a->template_name, "Template (default: the first that fits)")->check(cli::NotEmpty());
  sub->add_option("--config", a->config, "Config as JSON (default: the template's fallback)")->check(cli::NotEmpty());
  sub->add_option("--program", a->program_file, "A kernel program in protobuf JSON form")->check(cli::NotEmpty());
  sub->add_flag("--dump-program", a->dump_program, "Print the program as JSON instead of measuring it");
  sub->add_option("--wait", a->wait, "Seconds to wait for a device (default 30)")
      ->check(cli::Between(0, kOneYearSeconds, "a year at most"));
  sub->add_option("--number", a->number, "Runs per cost when the program sets no timing (default 2)")
      ->check(cli::Positive());
  sub->add_option("--repeat", a->repeat, "Costs when the program sets no timing (default 2)")
      ->check(cli::Positive());
  sub->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace tunefleet

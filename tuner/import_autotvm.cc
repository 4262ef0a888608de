#include "tuner/import_autotvm.h"

#include <cmath>
#include <cstdio>
#include <istream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/json_parse.h"
#include "common/printable.h"
#include "search-spaces/device_limits.h"
#include "tuner/run_session.h"

namespace tunefleet {
namespace {

// An AutoTVM record is a line of about a kilobyte; a longer one is no record, and reading it whole first (a 120 MB
// line took 2 GB) is not needed to say so.
constexpr size_t kMaxLineBytes = 1 << 20;

enum class LineRead { kLine, kEnd, kTooLong };

// The next line of `in` into `text` (without its newline). A line past kMaxLineBytes is said at once, not read to
// its end: it ends the import, and standard input without a newline (`import - </dev/zero`) has no end.
LineRead ReadLine(std::istream& in, std::string& text) {
  text.clear();
  std::streambuf* buf = in.rdbuf();
  bool any = false;
  for (int c = buf->sbumpc(); c != std::char_traits<char>::eof(); c = buf->sbumpc()) {
    any = true;
    if (c == '\n') return LineRead::kLine;
    if (text.size() == kMaxLineBytes) return LineRead::kTooLong;
    text.push_back(static_cast<char>(c));
  }
  in.setstate(std::ios::eofbit);
  return any ? LineRead::kLine : LineRead::kEnd;
}

// One parsed line.
struct TvmLine {
  std::string target;
  std::string task_name;
  nlohmann::json args;
  nlohmann::json entity;
  std::vector<double> costs;
  int error_no = 0;
  double all_cost = 0;
  double timestamp = 0;
};

Result<TvmLine> ParseLine(const std::string& text) {
  std::string why;
  const nlohmann::json j = ParseJson(text, &why);
  if (j.is_discarded()) return Status::InvalidArgument(why);
  TvmLine l;
  // v0.2: {"input": [target, task, args, kwargs], "config": {"entity": ...}, "result": [...]}; v0.1 (TVM before
  // 0.6): {"i": [target, task, args, kwargs, workload, {"i": index, "t", "c", "e": entity}], "r": [...]}.
  const auto& input = j.contains("input") ? j["input"] : j.contains("i") ? j["i"] : nlohmann::json();
  const auto& result = j.contains("result") ? j["result"] : j.contains("r") ? j["r"] : nlohmann::json();
  if (!input.is_array() || input.size() < 3 || !input[0].is_string() || !input[1].is_string()) {
    return Status::InvalidArgument("no \"input\": [target, task, args, ...]");
  }
  if (j.contains("config") && j["config"].is_object() && j["config"].contains("entity")) {
    l.entity = j["config"]["entity"];
  } else if (input.size() >= 6 && input[5].is_object() && input[5].contains("e")) {
    l.entity = input[5]["e"];
  } else {
    return Status::InvalidArgument("no \"config\" with an \"entity\" (nor, as in a v0.1 line, an \"e\" in the "
                                   "input's config)");
  }
  if (!result.is_array() || result.size() < 4 || !result[0].is_array()) {
    return Status::InvalidArgument("no \"result\": [costs, error_no, all_cost, timestamp]");
  }
  if (!result[1].is_number_integer() || result[1].get<int64_t>() < 0 || result[1].get<int64_t>() > 8) {
    return Status::InvalidArgument("error_no " + result[1].dump(-1, ' ', false,
                                                                nlohmann::json::error_handler_t::replace) +
                                   " is not a whole number from 0 to 8 (AutoTVM's MeasureErrorNo)");
  }
  l.target = input[0].get<std::string>();
  l.task_name = input[1].get<std::string>();
  l.args = input[2];
  l.error_no = static_cast<int>(result[1].get<int64_t>());
  if (l.error_no == 0) {  // a measured config: its costs are seconds, 1 ps to 10^6 s as the tracker accepts them
    for (const auto& c : result[0]) {
      const double v = c.is_number() ? c.get<double>() : 0;
      if (!c.is_number() || !std::isfinite(v) || v < 1e-12 || v > 1e6) {
        return Status::InvalidArgument("cost " + c.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                       " of a result without error is not a time between 1 ps and 10^6 s");
      }
      l.costs.push_back(v);
    }
    if (l.costs.empty()) return Status::InvalidArgument("a result without error has no cost");
  }
  // The wall time of the measurement, for information: one that is no time (negative, not finite) is kept as 0.
  l.all_cost = result[2].is_number() ? result[2].get<double>() : 0;
  if (!std::isfinite(l.all_cost) || l.all_cost < 0) l.all_cost = 0;
  // A measurement's time is part of what tells it from another of the same config (re-importing a file skips what
  // is there): a log without one is not AutoTVM's.
  l.timestamp = result[3].is_number() ? result[3].get<double>() : 0;
  if (!result[3].is_number() || !std::isfinite(l.timestamp) || l.timestamp <= 0 || l.timestamp > 1e11) {
    return Status::InvalidArgument("timestamp " +
                                   result[3].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                   " is not a time in seconds since 1970");
  }
  return l;
}

using Measurements = std::set<std::tuple<std::string, double, int, std::vector<double>>>;

// Row ids and the space for one (target, task, template), cached across lines.
struct Workload {
  std::shared_ptr<const Space> space;
  // What its rows in the log are made of; written (the log created when it is new) once a line of it is found good.
  proto::DeviceInfo device;
  Task task;
  const Template* tmpl = nullptr;
  bool in_log = false;
  int64_t device_id = 0, task_id = 0, template_id = 0;
  Measurements* seen = nullptr;  // of its task and template (SeenByUnit), once in the log
  bool said_outside = false;     // a config outside the space was noted
};

// (config, timestamp, status, costs) of the measurements of one task and template, on any device, that the log holds
// or the import has taken: two results of one config at one time are two measurements when they differ. The config's
// JSON, not its index: an index depends on the space, which depends on the device's limits as this build derives
// them (they changed once for imported devices). Of every device: an export of this log imported back into it names
// each record's device by its target ("autotvm:opencl ..."), another device row, and added every measurement a second
// time (its next export wrote each line twice); one measurement has one time and one set of costs, whatever device
// row it is filed under. One set per task and template for the whole file, so that the lines of two targets meet
// whether or not the records of the first were written yet.
using SeenByUnit = std::map<std::pair<int64_t, int64_t>, Measurements>;

// Writes the workload's device, task and template rows and, the first time its task and template are met, reads
// their measurements that the log holds on any device into `seen`.
Status EnterLog(TuningLog& log, Workload& w, SeenByUnit& seen) {
  TF_ASSIGN_OR_RETURN(w.device_id, log.UpsertDevice(w.device));
  nlohmann::json workload = {{"op", w.task.op}, {"precision", PrecisionName(w.task.precision)}};
  for (const auto& [name, value] : w.task.params) workload["params"][name] = value;
  TF_ASSIGN_OR_RETURN(w.task_id, log.UpsertTask(w.task.ToSpec(), w.task.op, workload.dump(), w.tmpl->Flops(w.task)));
  TF_ASSIGN_OR_RETURN(w.template_id, log.UpsertTemplate(w.tmpl->name(), w.tmpl->version()));
  const auto [unit, first] = seen.try_emplace({w.task_id, w.template_id});
  if (first) {
    TF_ASSIGN_OR_RETURN(auto existing, log.Records(w.task_id, w.template_id, 0));
    for (const auto& r : existing) unit->second.insert({r.config, r.timestamp, r.status, r.costs});
  }
  w.seen = &unit->second;
  w.in_log = true;
  return Status::OK();
}


// Writes ImportProgress's lines.
class ProgressLines {
 public:
  ProgressLines(const std::string& source, const ImportProgress& p)
      : source_(source), p_(p), start_(Now()), last_(start_) {}

  // Whether a line is due now (asked before each line): the caller then writes what it holds, and calls Print.
  bool Due() {
    if (p_.out == nullptr) return false;
    const auto now = Now();
    if (now - last_ < p_.every) return false;
    last_ = now;
    return true;
  }

  // `lines` have been read so far.
  void Print(size_t lines, const ImportCounts& counts) {
    const auto now = last_;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.0f", seconds > 0 ? static_cast<double>(lines) / seconds : 0.0);
    *p_.out << source_ << ": " << lines << (lines == 1 ? " line" : " lines") << " read (" << rate
            << " a second): " << counts.added << " records added, " << counts.duplicate << " already present, "
            << counts.skipped << " skipped" << std::endl;  // flushed: a person is waiting on it
  }

 private:
  std::chrono::steady_clock::time_point Now() const {
    return p_.clock ? p_.clock() : std::chrono::steady_clock::now();
  }

  const std::string& source_;
  const ImportProgress& p_;
  std::chrono::steady_clock::time_point start_, last_;
};

// The log to write to: opened (a deferred one created) by the first call.
using LogGetter = std::function<Result<TuningLog*>()>;

// Records read and not yet written: written kBatch at a time, in one transaction each (a commit per record took a
// millisecond a line), and by Import whatever way the lines end, so that a bad line keeps the records before it.
class PendingRecords {
 public:
  static constexpr size_t kBatch = 256;

  // `outside`: the config is not one its target's device can run (counted once added).
  void Add(TuningLog* log, RecordRow row, bool outside) {
    log_ = log;
    rows_.push_back(std::move(row));
    outside_.push_back(outside);
  }
  bool full() const { return rows_.size() >= kBatch; }

  Status Flush(ImportCounts& counts) {
    if (rows_.empty()) return Status::OK();
    TF_ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> ids, log_->AddRecordsUnlessPresent(rows_));
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!ids[i]) {
        ++counts.duplicate;  // another import of the same file added it meanwhile
        continue;
      }
      ++counts.added;
      if (outside_[i]) ++counts.outside_space;
    }
    rows_.clear();
    outside_.clear();
    return Status::OK();
  }

 private:
  TuningLog* log_ = nullptr;
  std::vector<RecordRow> rows_;
  std::vector<bool> outside_;
};

// The import itself, counting into `counts`; `session` is the session it opened (none until a record is added), for
// ImportAutotvm to end. The log is asked for only once a line is to be written.
Status ImportLines(std::istream& in, const std::string& source, const LogGetter& get_log,
                   const TemplateLookup& lookup_in, std::ostream& notes, const std::stop_token& stop,
                   const ImportProgress& progress, ImportCounts& counts, std::optional<RunSession>& session,
                   PendingRecords& pending) {
  TemplateLookup lookup = lookup_in ? lookup_in : [](const std::string& n) { return FindTemplate(n); };
  std::map<std::tuple<std::string, std::string, std::string>, Workload> cache;
  SeenByUnit seen;
  std::set<std::string> noted;
  ProgressLines progress_lines(source, progress);
  TuningLog* log = nullptr;
  std::string text;
  for (int line_no = 1;; ++line_no) {
    const LineRead read = ReadLine(in, text);
    if (read == LineRead::kEnd) break;
    if (progress_lines.Due()) {  // its counts are those of the records written
      TF_RETURN_IF_ERROR(pending.Flush(counts));
      progress_lines.Print(static_cast<size_t>(line_no - 1), counts);
    }
    if (stop.stop_requested()) {
      counts.interrupted = true;
      break;
    }
    if (read == LineRead::kTooLong) {
      return Status::InvalidArgument("a line of more than " + std::to_string(kMaxLineBytes) +
                                     " bytes: no AutoTVM record is so long")
          .WithContext(source + ":" + std::to_string(line_no));
    }
    if (text.find_first_not_of(" \t\r") == std::string::npos || text[0] == '#') continue;
    const std::string where = source + ":" + std::to_string(line_no);
    auto parsed = ParseLine(text);
    if (!parsed.ok()) return parsed.status().WithContext(where);
    TvmLine line = std::move(parsed).value();
    auto tvm_task = TaskFromTvmWorkload(line.task_name, line.args);
    if (!tvm_task.ok()) {
      ++counts.skipped;
      if (noted.insert(line.task_name).second)
        notes << where << ": skipped: " << Printable(tvm_task.status().message()) << "\n";
      continue;
    }
    const std::string spec = tvm_task->task.ToSpec();
    auto key = std::make_tuple(line.target, spec, tvm_task->template_name);
    auto found = cache.find(key);
    if (found == cache.end()) {
      const Template* tmpl = lookup(tvm_task->template_name);
      if (!tmpl) {
        ++counts.skipped;
        if (noted.insert(tvm_task->template_name).second) {
          notes << where << ": skipped: template " << Printable(tvm_task->template_name)
                << " is not built into this tunefleet\n";
        }
        continue;
      }
      auto device = DeviceFromTvmTarget(line.target);
      if (!device.ok()) return device.status().WithContext(where);
      // A target that lacks what the template needs (an Adreno target without -texture_spatial_limit for an image
      // template) cannot place its records: they are skipped, the rest of the file imported.
      const DeviceLimits limits = DeviceLimits::From(*device);
      if (std::string why; !tmpl->Supports(tvm_task->task, limits, &why)) {
        notes << where << ": skipped: " << tmpl->name() << " cannot run " << spec << " on target '"
              << Printable(line.target) << "'" << (why.empty() ? "" : ": " + Printable(why))
              << " (the other lines of this target and task too)\n";
        cache.emplace(key, Workload{});  // no space: skipped
        ++counts.skipped;
        continue;
      }
      auto space = tmpl->MakeSpace(tvm_task->task, limits);
      if (!space.ok()) return space.status().WithContext(where);
      Workload w;
      w.space = std::make_shared<const Space>(std::move(space).value());
      w.device = *std::move(device);
      w.task = tvm_task->task;
      w.tmpl = tmpl;
      found = cache.emplace(key, std::move(w)).first;
    }
    Workload& w = found->second;
    if (!w.space) {
      ++counts.skipped;
      continue;
    }
    auto config = ConfigFromTvmEntity(*w.space, line.entity);
    if (!config.ok()) return config.status().WithContext(where);
    auto cfg = w.space->FromJson(*config);
    if (!cfg.ok()) return cfg.status().WithContext(where);
    const uint64_t index = w.space->IndexOf(*cfg);
    if (!w.in_log) {
      if (log == nullptr) {  // the first write: a new log is created now
        TF_ASSIGN_OR_RETURN(log, get_log());
      }
      TF_RETURN_IF_ERROR(EnterLog(*log, w, seen));
    }
    if (!w.seen->insert({config->dump(), line.timestamp, line.error_no, line.costs}).second) {
      ++counts.duplicate;
      continue;
    }
    if (!session) {
      // Its lock, as a tune run's, lets a later run tell an import that was killed from one still going.
      const std::string args = nlohmann::json({{"import", source}, {"format", "autotvm"}}).dump();
      TF_ASSIGN_OR_RETURN(RunSession begun, RunSession::Begin(*log, args, RunHolder("import"),
                                                                  SessionLock::kBestEffort));
      session.emplace(std::move(begun));
    }
    RecordRow r;
    r.session_id = session->id();
    r.task_id = w.task_id;
    r.template_id = w.template_id;
    r.device_id = w.device_id;
    r.config_index = index;
    r.config = config->dump();
    r.status = line.error_no;
    r.costs = line.costs;
    r.mean_cost = line.costs.empty() ? 0
                                     : std::accumulate(line.costs.begin(), line.costs.end(), 0.0) / line.costs.size();
    r.wall_time = line.all_cost;
    r.message = line.error_no == 0 ? "" : "imported from AutoTVM log (error_no " + std::to_string(line.error_no) + ")";
    r.timestamp = line.timestamp;
    // Checked again in the inserts' transaction: another import of the same file may be adding it at this moment.
    const std::string why = w.space->Check(*cfg);
    if (!why.empty() && !w.said_outside) {
      w.said_outside = true;
      notes << where << ": imported, but " << spec << " [" << w.tmpl->name() << "] on target '"
            << Printable(line.target) << "' cannot run this config (" << Printable(why)
            << "): best, the report and the exports pass such records over (the other lines of this target and "
               "task too)\n";
    }
    pending.Add(log, std::move(r), !why.empty());
    if (pending.full()) TF_RETURN_IF_ERROR(pending.Flush(counts));
  }
  return Status::OK();
}

Result<ImportCounts> Import(std::istream& in, const std::string& source, const LogGetter& get_log,
                            const TemplateLookup& lookup, std::ostream& notes, const std::stop_token& stop,
                            const ImportProgress& progress) {
  std::optional<RunSession> session;
  ImportCounts counts;
  PendingRecords pending;
  Status st = ImportLines(in, source, get_log, lookup, notes, stop, progress, counts, session, pending);
  if (Status written = pending.Flush(counts); !written.ok() && st.ok()) st = written;
  if (!st.ok()) {
    // The records before the bad line stay (nothing recorded is dropped); the session says the import failed, and
    // the error how far it got.
    if (session) (void)session->End("failed");
    // After records read (written, or found already present or skipped), say that none was added: a disk full at the
    // first batch said "database or disk is full" alone.
    if (counts.added == 0) {
      return session || counts.duplicate + counts.skipped > 0 ? st.WithNote("no record was added") : st;
    }
    return st.WithNote(std::to_string(counts.added) + (counts.added == 1 ? " record" : " records") +
                       " before it added; importing the file again once it is mended skips them");
  }
  if (session) TF_RETURN_IF_ERROR(session->End(counts.interrupted ? "interrupted" : "done"));
  return counts;
}

}  // namespace

Result<ImportCounts> ImportAutotvm(std::istream& in, const std::string& source, DeferredLog& log,
                                   const TemplateLookup& lookup, std::ostream& notes, std::stop_token stop,
                                   const ImportProgress& progress) {
  return Import(in, source, [&log] { return log.Get(); }, lookup, notes, stop, progress);
}

Result<ImportCounts> ImportAutotvm(std::istream& in, const std::string& source, TuningLog& log,
                                   const TemplateLookup& lookup, std::ostream& notes, std::stop_token stop,
                                   const ImportProgress& progress) {
  return Import(in, source, [&log]() -> Result<TuningLog*> { return &log; }, lookup, notes, stop, progress);
}

}  // namespace tunefleet

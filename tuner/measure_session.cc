#include "tuner/measure_session.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "common/host_name.h"
#include "common/printable.h"
#include "tracker/client.h"
#include "tracker/lease_keep_alive.h"

namespace tunefleet {
namespace {

using Clock = std::chrono::steady_clock;

// After losing every device, how long a run takes only all the devices it asks for before it takes fewer: agents
// dropped together by one network blip reconnect within about a second of one another.
constexpr double kRegatherSeconds = 15.0;
// How long a run waits for the tracker to take its lease back.
constexpr double kReleaseSeconds = 5.0;
// How long a run waits for the tracker's summary when it asks whether the tracker answers at all.
constexpr double kAnswerSeconds = 5.0;

double SecondsLeft(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

Status Interrupted(size_t unmeasured) {
  return Status::Unavailable("interrupted: " + std::to_string(unmeasured) +
                             " job(s) of the batch in flight abandoned (nothing recorded for them)");
}

}  // namespace

TrackerClientOptions ClientOptionsFor(const SessionOptions& opts) {
  TrackerClientOptions o;
  o.token = opts.token;
  o.connect_timeout = opts.connect_timeout;
  o.tls_ca_file = opts.tls_ca_file;
  o.stop = opts.stop;
  return o;
}

MeasureSession::MeasureSession(const SessionOptions& opts) : opts_(opts) {}

MeasureSession::~MeasureSession() { Release(); }

Result<std::unique_ptr<MeasureSession>> MeasureSession::Open(const SessionOptions& opts) {
  std::unique_ptr<MeasureSession> s(new MeasureSession(opts));
  TF_ASSIGN_OR_RETURN(s->client_, TrackerClient::Connect(opts.tracker, ClientOptionsFor(opts)));
  TrackerClient* client = s->client_.get();
  s->on_stop_.emplace(opts.stop, std::function<void()>([client] { client->CancelCalls(); }));
  if (!opts.lease_note.empty()) s->ReleaseDeadRunLeases();
  // Ask without waiting first, so that a wait (for an agent to register, or for another run's lease to end) is said
  // before it starts rather than after it ran out.
  const auto asked = std::chrono::steady_clock::now();
  auto waited = [&asked] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count(); };
  Status acquired = s->Acquire(0);
  if (!acquired.ok() && opts.wait > 0 && !s->interrupted() &&
      (acquired.code() == Status::Code::kNotFound || acquired.code() == Status::Code::kDeadlineExceeded)) {
    spdlog::info("{}", s->WhyWaiting(opts.wait, acquired.code() == Status::Code::kNotFound));
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(opts.wait);
    acquired = s->Acquire(opts.wait, waited());
    // A tracker lost during the wait (restarted, say) is waited for within the same --wait, as a run's tracker lost
    // mid-run is: the call fails at once while it is away, so it is asked again every second.
    bool said = false;
    while (!acquired.ok() && acquired.code() == Status::Code::kUnavailable && !s->interrupted()) {
      const std::chrono::duration<double> left = give_up - std::chrono::steady_clock::now();
      if (left.count() <= 1) break;
      if (!said) {
        spdlog::warn("tracker {} went away while this run waited for a device ({}); asking again until the wait "
                     "ends", opts.tracker, acquired.message());
        said = true;
      }
      for (int i = 0; i < 10 && !s->interrupted(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      acquired = s->Acquire(left.count() - 1, waited());
    }
    if (said && !acquired.ok() && acquired.code() == Status::Code::kUnavailable && !s->interrupted()) {
      acquired = Status::Unavailable("tracker " + opts.tracker + " did not come back within the wait of " +
                                     std::to_string(static_cast<int>(opts.wait)) + " s: " + acquired.message());
    }
  }
  if (!acquired.ok() && s->interrupted()) return Status::Unavailable("interrupted while waiting for a device");
  TF_RETURN_IF_ERROR(acquired);
  // The tracker grants what is free, one device at least: fewer than asked is said once, here (a lease taken again
  // after a loss is not said again).
  if (s->devices_.size() < opts.devices) {
    spdlog::warn("--devices {}: the tracker leased {} device{} of key '{}', fewer than asked ({}); going on with {}",
                 opts.devices, s->devices_.size(), s->devices_.size() == 1 ? "" : "s", opts.key,
                 s->WhyFewerDevices(), s->devices_.size());
  }
  TF_RETURN_IF_ERROR(s->Adopt());
  return s;
}

std::string MeasureSession::WhyFewerDevices() {
  // The key's agents as the tracker has them now (this lease's among the leased): "no more were free" was said to a
  // run asking 3 of a key of 2.
  Result<proto::SummaryReply> summary = client_->Summary();
  if (summary.ok()) {
    for (const proto::KeySummary& k : summary->keys()) {
      if (k.key() != opts_.key) continue;
      const uint32_t registered = k.free() + k.leased();
      if (registered < opts_.devices) {
        return "the key has " + std::to_string(registered) + " agent" + (registered == 1 ? "" : "s") + " registered";
      }
      return "no more were free: " + std::to_string(registered) + " agents registered, the others leased";
    }
  }
  return "no more were free";
}

Status MeasureSession::Acquire(double wait, double queued_for, uint32_t count, uint32_t min_count) {
  TF_ASSIGN_OR_RETURN(Lease lease, client_->Acquire(opts_.key, count > 0 ? count : opts_.devices, min_count,
                                                    opts_.priority, wait, opts_.client, queued_for));
  if (lease.devices.empty()) return Status::Internal("tracker granted a lease without devices");
  lease_id_ = lease.lease_id;
  devices_ = lease.devices;
  lost_agents_.clear();
  said_left_ = devices_.size();
  keep_alive_ = std::make_unique<LeaseKeepAlive>(client_.get(), lease);
  if (!opts_.lease_note.empty()) {
    note_.reset();
    Result<LeaseNote> noted = LeaseNote::Write(opts_.lease_note, lease_id_, opts_.tracker);
    if (noted.ok()) {
      note_.emplace(std::move(noted).value());
    } else {
      spdlog::warn("{} (a run killed now would hold its lease until the tracker's --lease-ttl)",
                   noted.status().message());
    }
  }
  return Status::OK();
}

void MeasureSession::SayLeaseShrank() {
  // Known from the jobs of lost agents at once, and from the lease's renewals for an agent lost while idle.
  size_t left = devices_.size() - std::min(lost_agents_.size(), devices_.size());
  if (const uint32_t renewed = keep_alive_ ? keep_alive_->devices() : 0; renewed > 0)
    left = std::min<size_t>(left, renewed);
  if (left == 0 || left >= said_left_) return;  // none left: the wait for a device of the key says what comes next
  said_left_ = left;
  spdlog::warn("the lease goes on with {} of its {} devices: a device that comes back is not added to this run",
               left, devices_.size());
}

Status MeasureSession::Adopt() {
  if (!opts_.on_lease) return Status::OK();
  Status st = opts_.on_lease(devices_);
  if (!st.ok()) Release();
  return st;
}

void MeasureSession::ReleaseDeadRunLeases() {
  const std::string host = HostName();
  for (const NotedLease& n : FindDeadRunLeases(opts_.lease_note)) {
    if (n.tracker != opts_.tracker) continue;
    Lease lease;
    lease.lease_id = n.lease_id;
    Status st = client_->Release(lease);  // NotFound: it ran out meanwhile
    if (st.ok())
      spdlog::info("released the lease that run pid {} of this log still held ({}it ended without releasing it)",
                   n.pid, n.host == host ? "" : "on host '" + Printable(n.host) + "'; ");
  }
}

std::string MeasureSession::KeyState(std::optional<bool> none_registered, double waited) const {
  // The key's agents and their holders (`tunefleet query` shows the same), and the runs queued now that will be
  // served before this one: those of a higher priority, and those of its own that have waited longer.
  std::set<std::string> holders;
  size_t agents = 0, free = 0, ahead = 0;
  Result<proto::SummaryReply> summary = client_->Summary();
  if (summary.ok()) {
    for (const auto& a : summary->agents()) {
      if (a.key() != opts_.key) continue;
      ++agents;
      if (a.lease_holder().empty()) {
        ++free;
      } else {
        holders.insert(Printable(a.lease_holder()));
      }
    }
    for (const auto& k : summary->keys()) {
      if (k.key() != opts_.key) continue;
      for (const auto& q : k.queue()) {
        ahead += q.priority() > opts_.priority || (q.priority() == opts_.priority && q.waited_s() > waited);
      }
    }
  }
  if (none_registered.value_or(summary.ok() && agents == 0)) {
    return "no agent of key '" + opts_.key + "' is registered with tracker " + opts_.tracker +
           (none_registered ? " yet" : " now");
  }
  if (!none_registered && (!summary.ok() || free > 0)) return "";
  std::string by;
  for (const auto& h : holders) by += (by.empty() ? "" : ", ") + ("'" + h + "'");
  const std::string queued =
      ahead == 0 ? ""
                 : "; " + std::to_string(ahead) + (ahead == 1 ? " run waits" : " runs wait") +
                       " ahead of this one (`tunefleet query` lists the queue)";
  return "every agent of key '" + opts_.key + "'" + (agents > 0 ? " (" + std::to_string(agents) + ")" : "") +
         " is leased" + (by.empty() ? "" : " by " + by) + queued;
}

std::optional<std::string> MeasureSession::TrackerSilence() const {
  Result<proto::SummaryReply> summary = client_->Summary(kAnswerSeconds);
  if (summary.ok()) return std::nullopt;
  const Status status = summary.status();
  if (status.code() != Status::Code::kUnavailable && status.code() != Status::Code::kDeadlineExceeded) {
    return std::nullopt;
  }
  if (status.code() == Status::Code::kDeadlineExceeded) {
    return "no answer within " + std::to_string(static_cast<int>(kAnswerSeconds)) + " s";
  }
  // "tracker HOST:PORT: summary: Connection refused": the tracker is named by the line that says this.
  const std::string msg = status.message();
  constexpr std::string_view kCall = ": summary: ";
  const size_t at = msg.find(kCall);
  return at == std::string::npos ? msg : msg.substr(at + kCall.size());
}

std::string MeasureSession::WhyWaiting(double wait, std::optional<bool> none_registered) const {
  const std::string waiting = "waiting up to " + std::to_string(static_cast<int>(wait)) + " s";
  const std::string state = KeyState(none_registered, 0);
  if (state.empty()) return waiting + " for a device of key '" + opts_.key + "'";
  const bool leased = state.starts_with("every agent");
  return state + "; " + waiting + " for one" +
         (none_registered && leased
              ? " (a run that was killed holds its lease until the tracker's --lease-ttl runs out)"
              : "");
}

void MeasureSession::Release(bool tracker_silent) {
  if (lease_id_.empty()) return;
  keep_alive_.reset();
  Lease lease;
  lease.lease_id = lease_id_;
  // Bounded: a lease not given back runs out by itself after its TTL (a stalled link held a stopped run 30 s).
  Status st = client_->Release(lease, kReleaseSeconds);
  if (tracker_silent && !st.ok()) {
    spdlog::debug("release of lease {}: {}", lease_id_, st.ToString());
  } else if (st.code() == Status::Code::kDeadlineExceeded || st.code() == Status::Code::kUnavailable) {
    spdlog::info("the tracker did not take back lease {} within {:.0f} s ({}); its devices are free again when it runs "
                 "out", lease_id_, kReleaseSeconds, st.message());
  } else if (!st.ok()) {
    spdlog::debug("release of lease {}: {}", lease_id_, st.ToString());
  }
  lease_id_.clear();
  note_.reset();
}

Status MeasureSession::Measure(
    const std::vector<const proto::KernelProgram*>& programs,
    const std::function<Status(size_t, const proto::MeasureResult&, const std::string&)>& on_result) {
  std::vector<size_t> pending(programs.size());
  for (size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  bool waiting = false;  // a device was lost and we are inside the device-wait window
  Clock::time_point deadline, wait_began;
  // Jobs whose loss a warning has said. Sent again on a lease that has no device left, they come straight back
  // without having reached a device: not said (and counted) again; the wait for a device below says what happens.
  std::set<size_t> said_lost;

  while (!pending.empty()) {
    if (interrupted()) return Interrupted(pending.size());
    size_t results = 0;
    Status callback_error, measure_failed;
    std::vector<size_t> next;
    if (!lease_id_.empty()) {
      std::unordered_map<uint64_t, size_t> job_to_program;
      std::map<std::pair<std::string, std::string>, size_t> lost;  // (agent, why) -> jobs, said once per call
      std::vector<proto::MeasureJob> jobs;
      for (size_t i : pending) {
        proto::MeasureJob job;
        job.set_job_id(next_job_id_++);
        *job.mutable_program() = *programs[i];
        job_to_program[job.job_id()] = i;
        jobs.push_back(std::move(job));
      }
      Status st = client_->Measure(lease_id_, std::move(jobs), [&](const proto::MeasureEvent& ev) {
        auto it = job_to_program.find(ev.job_id());
        if (it == job_to_program.end()) return;
        size_t i = it->second;
        job_to_program.erase(it);
        if (ev.device_lost()) {
          if (said_lost.insert(i).second || !ev.agent_id().empty()) ++lost[{ev.agent_id(), ev.message()}];
          next.push_back(i);
          return;
        }
        if (!callback_error.ok()) {
          next.push_back(i);
          return;
        }
        callback_error = on_result(i, ev.result(), ev.device_fingerprint());
        ++results;
      });
      // The tracker's message says why (the agent lost, left, or gave the job back): not said twice here.
      for (const auto& [who, jobs] : lost) {
        spdlog::warn("{} job{} {} without a result, to be measured again: {}", jobs, jobs == 1 ? "" : "s",
                     who.first.empty() ? "not yet sent to a device ended" : "of agent " + who.first + " ended",
                     Printable(who.second));
        const bool leased = std::any_of(devices_.begin(), devices_.end(),
                                        [&](const proto::LeasedDevice& d) { return d.agent_id() == who.first; });
        if (leased) lost_agents_.insert(who.first);
      }
      SayLeaseShrank();
      if (!callback_error.ok()) return callback_error;
      if (interrupted()) return Interrupted(job_to_program.size() + next.size());
      // Jobs without any event (the call failed part-way) are measured again too.
      for (const auto& [job, i] : job_to_program) next.push_back(i);
      if (!st.ok() && results == 0) {
        // A refused request (too large, a bad token) fails again on any device: end the run, not wait for one.
        if (st.code() == Status::Code::kInvalidArgument || st.code() == Status::Code::kPermissionDenied) return st;
        measure_failed = st;
      }
    } else {
      next = pending;
    }
    pending = std::move(next);
    if (pending.empty()) break;
    if (results > 0) {  // progress on this lease: send the rest again; a later loss gets a whole wait of its own
      waiting = false;
      continue;
    }

    // No progress: the lease lost its devices (or the tracker went away). Wait for a device of the key, bounded.
    // A tracker that does not answer is said as such: "no device left" blamed the devices (the network review).
    const std::optional<std::string> silence = measure_failed.ok() ? std::nullopt : TrackerSilence();
    if (!measure_failed.ok() && !silence) spdlog::warn("measure on lease {}: {}", lease_id_, measure_failed.ToString());
    Release(silence.has_value());  // first, so that the line below does not name this run among the holders
    if (!waiting) {
      waiting = true;
      wait_began = Clock::now();
      deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(opts_.device_wait));
      if (silence) {
        spdlog::warn("tracker {} does not answer ({}); waiting up to {} s ({}) for it to come back with a device of "
                     "key '{}'", opts_.tracker, *silence, static_cast<int>(opts_.device_wait),
                     opts_.device_wait_option, opts_.key);
      } else {
        spdlog::warn("no device left on the lease; {}", WhyWaiting(opts_.device_wait, std::nullopt));
      }
    }
    // As many devices as the lease held when it lost the last of them (it may have gone on with fewer, said by
    // SayLeaseShrank), not --devices again: after a tracker restart the run that reconnects first took every device
    // of the key, and another run that held some waited with none (found by the fleet review). A lease taken again
    // with fewer than asked (agents back one by one) does not lower what a later loss asks for (short_of_).
    const auto held = static_cast<uint32_t>(std::max(said_left_ > 0 ? said_left_ : opts_.devices, short_of_));
    Status last;
    while (SecondsLeft(deadline) > 0 && !interrupted()) {
      // In calls of at most 10 s, each saying how long the run has waited: it keeps its place in the key's queue
      // (each call was queued anew, behind every run that had come meanwhile). Devices lost together (a Wi-Fi blip,
      // a tracker restart) come back within a second or so of one another: for the first kRegatherSeconds of the
      // wait the run takes only all it asks for, so that it does not go on for good with the first one back (found
      // by the network review); then as many as there are.
      const double waited = std::chrono::duration<double>(Clock::now() - wait_began).count();
      const double regather = std::min(kRegatherSeconds, opts_.device_wait / 2);  // a short --device-wait: half
      const bool all = held > 1 && waited < regather;
      last = Acquire(std::min(all ? regather - waited : 10.0, std::max(0.5, SecondsLeft(deadline))), waited, held,
                     all ? held : 1);
      if (last.ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    if (interrupted()) return Interrupted(pending.size());
    if (lease_id_.empty()) {
      if (const std::optional<std::string> still = TrackerSilence()) {
        return Status::Unavailable("tracker " + opts_.tracker + " did not answer again within " +
                                   std::to_string(static_cast<int>(opts_.device_wait)) + " s (" +
                                   opts_.device_wait_option + "): " + *still + "; " + std::to_string(pending.size()) +
                                   " job(s) were not measured (nothing recorded for them)");
      }
      // The key as it is now: the last call's own error spoke of its wait of at most 10 s, as if it were --wait.
      const std::string state =
          KeyState(std::nullopt, std::chrono::duration<double>(Clock::now() - wait_began).count());
      return Status::Unavailable("no device of key '" + opts_.key + "' came back within " +
                                 std::to_string(static_cast<int>(opts_.device_wait)) + " s (" +
                                 opts_.device_wait_option + "); " +
                                 std::to_string(pending.size()) +
                                 " job(s) were not measured (nothing recorded for them)" +
                                 (!state.empty() ? ": " + state : last.ok() ? "" : ": " + last.message()));
    }
    std::string names;
    for (const auto& d : devices_) names += (names.empty() ? "" : ", ") + Printable(d.device().name());
    short_of_ = devices_.size() < held ? held : 0;
    spdlog::info("{} of key '{}' available again (of {} asked for, as many as the run had): {}",
                 devices_.size() == 1 ? std::string("1 device") : std::to_string(devices_.size()) + " devices",
                 opts_.key, held, names);
    TF_RETURN_IF_ERROR(Adopt());
  }
  return Status::OK();
}

}  // namespace tunefleet

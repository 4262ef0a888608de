#include "agent/tracker_connection.h"

#include <spdlog/spdlog.h>

#include <string>
#include <utility>

#include "common/grpc_keepalive.h"
#include "common/grpc_reason.h"

namespace tunefleet::agent {
namespace {

constexpr int kMaxMessageBytes = 64 << 20;  // kernel programs with large sources stay far below this
// The tracker sends one job at a time (and a cancel or two): more messages waiting than this is a tracker that
// breaks the protocol, and the agent drops the connection rather than queue without limit.
constexpr size_t kMaxWaitingMessages = 16;
constexpr std::chrono::seconds kLeaveWithin{3};  // for the tracker to close the stream after Leaving

bool IsRejection(grpc::StatusCode code) {
  return code == grpc::StatusCode::PERMISSION_DENIED || code == grpc::StatusCode::UNAUTHENTICATED;
}

}  // namespace

TrackerConnection::TrackerConnection(const SessionOptions& options, const proto::DeviceInfo& device,
                                     JobRunner* runner, std::atomic<uint64_t>* jobs_done)
    : options_(options), device_(device), runner_(runner), jobs_done_(jobs_done) {}

TrackerConnection::~TrackerConnection() {
  // Serve() joins its threads before it returns; this only guards a connection destroyed while they run.
  if (!heartbeats_.joinable() && !reader_.joinable() && !leave_timer_.joinable()) return;
  context_.TryCancel();
  StopTimers();
  if (reader_.joinable()) reader_.join();
}

void TrackerConnection::StopTimers() {
  {
    std::lock_guard<std::mutex> lock(hb_mu_);
    hb_stop_ = true;
  }
  hb_cv_.notify_all();
  if (heartbeats_.joinable()) heartbeats_.join();
  if (leave_timer_.joinable()) leave_timer_.join();
}

void TrackerConnection::Stop() {
  std::lock_guard<std::mutex> lock(phase_mu_);
  if (stop_requested_) return;
  stop_requested_ = true;
  if (serving_) {
    LeaveLocked();
  } else {
    context_.TryCancel();
  }
}

void TrackerConnection::LeaveLocked() {
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    leaving_ = true;
  }
  inbox_cv_.notify_one();
  {
    std::lock_guard<std::mutex> lock(hb_mu_);
    leave_by_ = std::chrono::steady_clock::now() + kLeaveWithin;
  }
  hb_cv_.notify_all();
  if (!leave_timer_.joinable()) leave_timer_ = std::thread([this] { CancelUnlessClosedInTime(); });
}

void TrackerConnection::CancelUnlessClosedInTime() {
  std::unique_lock<std::mutex> lock(hb_mu_);
  if (!hb_cv_.wait_until(lock, *leave_by_, [&] { return hb_stop_; })) {
    spdlog::warn("tracker {} did not close the session within {} s of Leaving; cancelling it", options_.tracker,
                 kLeaveWithin.count());
    context_.TryCancel();
  }
}

void TrackerConnection::HeartbeatLoop() {
  const auto give_up = std::chrono::steady_clock::now() + options_.register_timeout;
  std::unique_lock<std::mutex> lock(hb_mu_);
  while (!hb_cv_.wait_for(lock, options_.heartbeat_interval, [&] { return hb_stop_ || leave_by_.has_value(); })) {
    if (!registered_) {
      // A half-open connection (e.g. through adb reverse with nothing behind it) never answers.
      if (std::chrono::steady_clock::now() < give_up) continue;
      spdlog::warn("tracker {} did not answer the registration", options_.tracker);
      context_.TryCancel();
      break;
    }
    proto::AgentMessage beat;
    beat.mutable_heartbeat();
    // Written without hb_mu_: a write to a tracker that stopped reading blocks until the keepalive gives up, and
    // Stop (LeaveLocked) and Finish take hb_mu_ to say they are leaving.
    lock.unlock();
    bool wrote = false;
    {
      std::lock_guard<std::mutex> write_lock(write_mu_);
      wrote = stream_->Write(beat);
    }
    lock.lock();
    if (!wrote) break;
  }
}

void TrackerConnection::ReadLoop() {
  proto::TrackerMessage m;
  while (stream_->Read(&m)) {
    if (m.has_cancel()) {
      const uint64_t id = m.cancel().job_id();
      std::lock_guard<std::mutex> inbox_lock(inbox_mu_);
      std::lock_guard<std::mutex> lock(job_mu_);
      if (running_ == id) {
        spdlog::info("job {}: cancelled by the tracker (its tuner no longer waits for it)", id);
        runner_->AbortJob();
      } else {
        // Not started yet (still queued here): it is answered without running.
        for (const auto& queued : inbox_) {
          if (queued.has_job() && queued.job().job_id() == id) cancelled_.insert(id);
        }
      }
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(inbox_mu_);
      if (inbox_.size() >= kMaxWaitingMessages) {
        spdlog::warn("tracker {} sent more than {} messages ahead of the agent (the protocol sends one job at a "
                     "time); dropping the connection",
                     options_.tracker, kMaxWaitingMessages);
        std::lock_guard<std::mutex> job_lock(job_mu_);
        if (running_) runner_->AbortJob();  // the tracker measures it again when it sees the agent gone
        inbox_.clear();
        context_.TryCancel();
        break;
      }
      inbox_.push_back(std::move(m));
    }
    inbox_cv_.notify_one();
  }
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    inbox_done_ = true;
  }
  inbox_cv_.notify_one();
}

bool TrackerConnection::NextMessage(proto::TrackerMessage* message, bool* skip) {
  std::unique_lock<std::mutex> lock(inbox_mu_);
  inbox_cv_.wait(lock, [&] { return inbox_done_ || leaving_ || !inbox_.empty(); });
  if (leaving_ || inbox_.empty()) return false;  // stopping, or the stream ended
  *message = std::move(inbox_.front());
  inbox_.pop_front();
  *skip = false;
  if (message->has_job()) {
    std::lock_guard<std::mutex> job_lock(job_mu_);
    *skip = cancelled_.erase(message->job().job_id()) > 0;
    if (!*skip) running_ = message->job().job_id();
  }
  return true;
}

bool TrackerConnection::AnswerJob(const proto::Job& job, bool skip) {
  spdlog::info("job {}: {} launch(es)", job.job_id(), job.program().launches_size());
  proto::AgentMessage reply;
  proto::JobResult* result = reply.mutable_result();
  result->set_job_id(job.job_id());
  if (skip) {
    result->mutable_result()->set_status(proto::RUN_TIMEOUT);
    result->mutable_result()->set_message("cancelled before it started: the tuner abandoned the job");
    result->mutable_result()->set_not_measured(true);  // not a result: no tracker counts it as a timeout
  } else {
    *result->mutable_result() = runner_->Run(job.program());
  }
  {
    std::lock_guard<std::mutex> lock(job_mu_);
    running_.reset();
    runner_->ForgetAbort();
  }
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    if (leaving_) return true;  // stopped while it ran (and aborted): the tracker measures it again elsewhere
  }
  if (result->result().not_measured()) {  // not a job done, as the tracker counts them
    spdlog::info("job {}: not measured: {}", job.job_id(), result->result().message().substr(0, 200));
  } else {
    ++*jobs_done_;
    spdlog::info("job {}: {} mean {:.3g} s{}{}", job.job_id(), proto::MeasureStatus_Name(result->result().status()),
                 result->result().mean_cost(), result->result().message().empty() ? "" : ": ",
                 result->result().message().substr(0, 200));
  }
  {
    std::lock_guard<std::mutex> write_lock(write_mu_);
    if (!stream_->Write(reply)) return false;
  }
  if (std::optional<std::string> why = runner_->Unavailable()) {
    // No job can be built now: leave, so that the tracker sends them to other devices (and the tuner waits for this
    // one) rather than here, one refusal after another. The session comes back when there is room. One line says it
    // (two, this and the session's, said it 6 ms apart).
    spdlog::warn("not taking jobs: {}; left tracker {}, joining it again once there is room (looked at every {:.0f} s)",
                 *why, options_.tracker, options_.room_check_interval.count() / 1000.0);
    leave_reason_ = *why;
    std::lock_guard<std::mutex> lock(phase_mu_);
    if (!stop_requested_) LeaveLocked();
  }
  return true;
}

bool TrackerConnection::SayGoodbye(bool ok, bool* said_last) {
  std::unique_lock<std::mutex> lock(inbox_mu_);
  if (leaving_ && ok && registered_) {
    // Say Leaving and close our side; the tracker then ends the stream (the leave timer cancels it if not).
    lock.unlock();
    proto::AgentMessage bye;
    bye.mutable_leaving()->set_reason(leave_reason_);
    bool wrote = false;
    {
      std::lock_guard<std::mutex> write_lock(write_mu_);
      wrote = stream_->Write(bye, grpc::WriteOptions().set_last_message());
    }
    // The close of this side went with that write, written or not: closing it again (WritesDone) is an operation
    // gRPC aborts the process on (GRPC_CALL_ERROR_TOO_MANY_OPERATIONS), as it did when the call had ended meanwhile.
    *said_last = true;
    if (!wrote) return false;  // the call has ended (or broke): Finish cancels what is left of it
    lock.lock();
    inbox_cv_.wait(lock, [&] { return inbox_done_; });
    return ok;
  }
  return ok && !leaving_;  // leaving unregistered, or the stream broke: nothing to say, cancel
}

Status TrackerConnection::Finish(bool ok, bool said_last) {
  StopTimers();
  if (!ok) context_.TryCancel();  // unblocks the reader's Read
  reader_.join();
  if (ok && !said_last) {
    // We stopped reading because the server ended the stream; let it close our side too.
    std::lock_guard<std::mutex> write_lock(write_mu_);
    stream_->WritesDone();
  }
  const grpc::Status status = stream_->Finish();
  if (IsRejection(status.error_code())) {
    return Status::PermissionDenied("tracker " + options_.tracker + " rejected the agent: " + status.error_message());
  }
  if (status.ok()) return Status::Unavailable("the tracker closed the session");
  return Status::Unavailable(status.error_message().empty()
                                 ? "stream broke (code " + std::to_string(status.error_code()) + ")"
                                 : ExplainKeepalive(GrpcReason(status.error_message())));
}

Status TrackerConnection::Serve(bool* registered) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  SetClientKeepalive(&args);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options_.tls_root_certs.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options_.tls_root_certs;
    credentials = grpc::SslCredentials(ssl);
  }
  stub_ = proto::Tracker::NewStub(grpc::CreateCustomChannel(options_.tracker, credentials, args));
  stream_ = stub_->AgentSession(&context_);

  proto::AgentMessage hello;
  proto::RegisterAgent* reg = hello.mutable_register_();
  reg->set_key(options_.key);
  *reg->mutable_device() = device_;
  reg->set_agent_version(options_.agent_version);
  reg->set_token(options_.token);
  bool ok = stream_->Write(hello);

  heartbeats_ = std::thread([this] { HeartbeatLoop(); });
  reader_ = std::thread([this] { ReadLoop(); });
  {
    std::lock_guard<std::mutex> lock(phase_mu_);
    serving_ = true;
    if (stop_requested_) LeaveLocked();  // Stop() came before the loops ran
  }

  while (ok) {
    proto::TrackerMessage message;
    bool skip = false;
    if (!NextMessage(&message, &skip)) break;
    if (message.has_registered()) {
      if (!registered_) {
        registered_ = true;
        *registered = true;
        spdlog::info("registered with tracker {} as {} (key {}, device {})", options_.tracker,
                     message.registered().agent_id(), options_.key, device_.name());
      }
    } else if (message.has_job()) {
      ok = AnswerJob(message.job(), skip);
    }
  }

  bool said_last = false;
  ok = SayGoodbye(ok, &said_last);
  {
    std::lock_guard<std::mutex> lock(phase_mu_);
    serving_ = false;  // a Stop() from now on cancels the call
  }
  return Finish(ok, said_last);
}

}  // namespace tunefleet::agent

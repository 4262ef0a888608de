#include "agent/session.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "common/grpc_keepalive.h"
#include "proto/tunefleet.grpc.pb.h"

namespace tunefleet::agent {
namespace {

using Stream = grpc::ClientReaderWriter<proto::AgentMessage, proto::TrackerMessage>;

constexpr int kMaxMessageBytes = 64 << 20;  // kernel programs with large sources stay far below this
// The tracker sends one job at a time (and a cancel or two): more messages waiting than this is a tracker that
// breaks the protocol, and the agent drops the connection rather than queue without limit.
constexpr size_t kMaxWaitingMessages = 16;

bool IsRejection(grpc::StatusCode code) {
  return code == grpc::StatusCode::PERMISSION_DENIED || code == grpc::StatusCode::UNAUTHENTICATED;
}

}  // namespace

Session::Session(SessionOptions options, proto::DeviceInfo device, JobRunner* runner)
    : options_(std::move(options)), device_(std::move(device)), runner_(runner) {}

void Session::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  if (leave_) {
    leave_();
  } else if (active_call_ != nullptr) {
    active_call_->TryCancel();
  }
  stop_cv_.notify_all();
}

Status Session::Run() {
  auto backoff = options_.initial_backoff;
  for (;;) {
    bool registered = false;
    Status status = Connect(&registered);
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stopping_) return Status::OK();
    }
    if (status.code() == Status::Code::kPermissionDenied) return status;
    if (registered) backoff = options_.initial_backoff;
    // A TLS tracker closes a plain connection without a word: gRPC says only "Socket closed".
    const bool maybe_tls = !registered && options_.tls_root_certs.empty() &&
                           status.message().find("Socket closed") != std::string::npos;
    spdlog::warn("tracker {}: {}{}; reconnecting in {:.1f} s", options_.tracker, status.message(),
                 maybe_tls ? " (if the tracker uses TLS, give --tls-ca)" : "", backoff.count() / 1000.0);
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_cv_.wait_for(lock, backoff, [this] { return stopping_; })) return Status::OK();
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

Status Session::Connect(bool* registered) {
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
  auto stub = proto::Tracker::NewStub(grpc::CreateCustomChannel(options_.tracker, credentials, args));
  grpc::ClientContext context;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::OK();
    active_call_ = &context;
  }
  std::unique_ptr<Stream> stream = stub->AgentSession(&context);
  std::mutex write_mu;  // one writer at a time: results (this thread) and heartbeats (helper thread)

  proto::AgentMessage hello;
  proto::RegisterAgent* reg = hello.mutable_register_();
  reg->set_key(options_.key);
  *reg->mutable_device() = device_;
  reg->set_agent_version(options_.agent_version);
  reg->set_token(options_.token);
  bool ok = stream->Write(hello);

  // The helper thread heartbeats once registered, and gives up on a tracker that never answers the registration
  // (a half-open connection, e.g. through adb reverse with nothing behind it).
  // While the session leaves (Stop()), it sends no heartbeat and cancels the stream when the tracker has not closed
  // it by `leave_by`, whatever blocks.
  std::mutex hb_mu;
  std::condition_variable hb_cv;
  bool hb_stop = false;
  std::optional<std::chrono::steady_clock::time_point> leave_by;  // guarded by hb_mu
  std::atomic<bool> is_registered{false};
  std::thread heartbeats([&] {
    const auto give_up = std::chrono::steady_clock::now() + options_.register_timeout;
    std::unique_lock<std::mutex> lock(hb_mu);
    while (!hb_cv.wait_for(lock, options_.heartbeat_interval, [&] { return hb_stop || leave_by.has_value(); })) {
      if (!is_registered) {
        if (std::chrono::steady_clock::now() < give_up) continue;
        spdlog::warn("tracker {} did not answer the registration", options_.tracker);
        context.TryCancel();
        break;
      }
      proto::AgentMessage beat;
      beat.mutable_heartbeat()->set_jobs_done(jobs_done_);
      std::lock_guard<std::mutex> write_lock(write_mu);
      if (!stream->Write(beat)) break;
    }
    if (!hb_stop && leave_by.has_value() &&
        !hb_cv.wait_until(lock, *leave_by, [&] { return hb_stop; })) {
      context.TryCancel();  // the tracker did not close the stream in time
    }
  });

  // A reader thread takes the tracker's messages off the stream while a job runs on this thread, so a CancelJob
  // for the running job is acted on at once; everything else is queued for this thread in order.
  std::mutex inbox_mu;
  std::condition_variable inbox_cv;
  std::deque<proto::TrackerMessage> inbox;
  bool inbox_done = false;
  // Lock order: inbox_mu, then job_mu. A job leaves the inbox and becomes `running` under both, so a cancel always
  // finds its job either queued or running (or already answered).
  std::mutex job_mu;                 // orders aborts with the start and end of each job
  std::optional<uint64_t> running;  // guarded by job_mu
  std::set<uint64_t> cancelled;      // queued jobs cancelled before they started; guarded by job_mu
  bool leaving = false;              // Stop() was called; guarded by inbox_mu
  std::thread reader([&] {
    proto::TrackerMessage m;
    while (stream->Read(&m)) {
      if (m.has_cancel()) {
        const uint64_t id = m.cancel().job_id();
        std::lock_guard<std::mutex> inbox_lock(inbox_mu);
        std::lock_guard<std::mutex> lock(job_mu);
        if (running == id) {
          spdlog::info("job {}: cancelled by the tracker (its tuner went away)", id);
          runner_->AbortJob();
        } else {
          // Not started yet (still queued here): it is answered without running.
          for (const auto& queued : inbox) {
            if (queued.has_job() && queued.job().job_id() == id) cancelled.insert(id);
          }
        }
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(inbox_mu);
        if (inbox.size() >= kMaxWaitingMessages) {
          spdlog::warn("tracker {} sent more than {} messages ahead of the agent (the protocol sends one job at a "
                       "time); dropping the connection",
                       options_.tracker, kMaxWaitingMessages);
          std::lock_guard<std::mutex> job_lock(job_mu);
          if (running) runner_->AbortJob();  // the tracker measures it again when it sees the agent gone
          inbox.clear();
          context.TryCancel();
          break;
        }
        inbox.push_back(std::move(m));
      }
      inbox_cv.notify_one();
    }
    {
      std::lock_guard<std::mutex> lock(inbox_mu);
      inbox_done = true;
    }
    inbox_cv.notify_one();
  });

  {
    std::lock_guard<std::mutex> lock(mu_);
    leave_ = [&] {  // called by Stop() under mu_
      {
        std::lock_guard<std::mutex> inbox_lock(inbox_mu);
        leaving = true;
      }
      inbox_cv.notify_one();
      {
        std::lock_guard<std::mutex> hb_lock(hb_mu);
        leave_by = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      }
      hb_cv.notify_all();
    };
    if (stopping_) leave_();  // Stop() came before the hook was set
  }

  while (ok) {
    proto::TrackerMessage message;
    bool skip = false;  // a job cancelled while it was queued
    {
      std::unique_lock<std::mutex> lock(inbox_mu);
      inbox_cv.wait(lock, [&] { return inbox_done || leaving || !inbox.empty(); });
      if (leaving || inbox.empty()) break;  // stopping, or the stream ended
      message = std::move(inbox.front());
      inbox.pop_front();
      if (message.has_job()) {
        std::lock_guard<std::mutex> job_lock(job_mu);
        skip = cancelled.erase(message.job().job_id()) > 0;
        if (!skip) running = message.job().job_id();
      }
    }
    if (message.has_registered()) {
      if (!is_registered) {
        is_registered = true;
        *registered = true;
        spdlog::info("registered with tracker {} as {} (key {}, device {})", options_.tracker,
                     message.registered().agent_id(), options_.key, device_.name());
      }
    } else if (message.has_job()) {
      const proto::Job& job = message.job();
      spdlog::info("job {}: {} launch(es)", job.job_id(), job.program().launches_size());
      proto::AgentMessage reply;
      proto::JobResult* result = reply.mutable_result();
      result->set_job_id(job.job_id());
      if (skip) {
        result->mutable_result()->set_status(proto::RUN_TIMEOUT);
        result->mutable_result()->set_message("cancelled before it started: the tuner abandoned the job");
      } else {
        *result->mutable_result() = runner_->Run(job.program());
      }
      {
        std::lock_guard<std::mutex> lock(job_mu);
        running.reset();
        runner_->ForgetAbort();
      }
      {
        std::lock_guard<std::mutex> lock(inbox_mu);
        if (leaving) break;  // stopped while it ran (and aborted): the tracker measures it again elsewhere
      }
      ++jobs_done_;
      spdlog::info("job {}: {} mean {:.3g} s{}{}", job.job_id(), proto::MeasureStatus_Name(result->result().status()),
                   result->result().mean_cost(), result->result().message().empty() ? "" : ": ",
                   result->result().message().substr(0, 200));
      std::lock_guard<std::mutex> write_lock(write_mu);
      ok = stream->Write(reply);
    }
  }

  bool said_last = false;
  {
    std::unique_lock<std::mutex> lock(inbox_mu);
    if (leaving && ok && is_registered) {
      // Say Leaving and close our side; the tracker then ends the stream (the heartbeat thread cancels it if not).
      lock.unlock();
      proto::AgentMessage bye;
      bye.mutable_leaving();
      {
        std::lock_guard<std::mutex> write_lock(write_mu);
        said_last = stream->Write(bye, grpc::WriteOptions().set_last_message());
      }
      lock.lock();
      inbox_cv.wait(lock, [&] { return inbox_done; });
    } else if (leaving) {
      ok = false;  // nothing to say: cancel below
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    leave_ = nullptr;
  }

  {
    std::lock_guard<std::mutex> lock(hb_mu);
    hb_stop = true;
  }
  hb_cv.notify_all();
  if (heartbeats.joinable()) heartbeats.join();
  if (!ok) context.TryCancel();  // unblocks the reader's Read
  reader.join();
  if (ok && !said_last) {
    // We stopped reading because the server ended the stream; let it close our side too.
    std::lock_guard<std::mutex> write_lock(write_mu);
    stream->WritesDone();
  }
  grpc::Status status = stream->Finish();
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_call_ = nullptr;
  }
  if (IsRejection(status.error_code())) {
    return Status::PermissionDenied("tracker " + options_.tracker + " rejected the agent: " + status.error_message());
  }
  if (status.ok()) return Status::Unavailable("the tracker closed the session");
  return Status::Unavailable(status.error_message().empty() ? "stream broke (code " +
                                                                  std::to_string(status.error_code()) + ")"
                                                            : ExplainKeepalive(status.error_message()));
}

}  // namespace tunefleet::agent

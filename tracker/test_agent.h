// TestAgent (tests only): stands in for the OpenCL agent of agent/ in the tracker's own tests, which check the
// tracker's bookkeeping (leases, queues, routing each result to its job, dropping bad agents) and need the agent's
// answer to be the test's choice: its cost tells which job it answers, and the agent must die, lie or fall silent on
// cue, as a phone that is unplugged mid-measurement or a broken agent would, which a real agent does not do on
// purpose. It is a real gRPC client speaking the AgentSession protocol: it registers, then answers every Job with a
// canned MeasureResult (mean_cost = 1 ms * (job_id + 1)), or, in kDieOnJob mode, drops its stream as soon as it
// receives a job; in kNanCost mode it answers with a cost that is not a number. The tracker with real agents on
// PoCL is tested in tests/ (the tune, fault, interrupt and resume end-to-end tests).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "proto/tunefleet.grpc.pb.h"

namespace tunefleet::tracker {

class TestAgent {
 public:
  enum class Mode { kAnswer, kDieOnJob, kSilent, kNanCost };

  TestAgent(const std::string& target, const std::string& key, const std::string& token, Mode mode,
            const std::string& fingerprint = "fp-pocl")
      : mode_(mode) {
    channel_ = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
    stub_ = proto::Tracker::NewStub(channel_);
    stream_ = stub_->AgentSession(&ctx_);
    proto::AgentMessage reg;
    reg.mutable_register_()->set_key(key);
    reg.mutable_register_()->set_token(token);
    reg.mutable_register_()->set_agent_version("test");
    reg.mutable_register_()->mutable_device()->set_name("test-device-" + key);
    reg.mutable_register_()->mutable_device()->set_fingerprint(fingerprint);
    stream_->Write(reg);
    reader_ = std::thread([this] { Loop(); });
  }

  ~TestAgent() {
    Kill();
    reader_.join();
  }

  // Waits for the Registered reply; returns the agent id, or "" when the tracker ended the stream.
  std::string WaitRegistered() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !agent_id_.empty() || ended_; });
    return agent_id_;
  }
  // Waits for the stream to end and returns the tracker's final status.
  grpc::Status WaitEnded() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return ended_; });
    return final_;
  }
  void Kill() { ctx_.TryCancel(); }
  int jobs_seen() const { return jobs_seen_; }

 private:
  void Loop() {
    proto::TrackerMessage m;
    while (stream_->Read(&m)) {
      if (m.has_registered()) {
        std::lock_guard<std::mutex> lock(mu_);
        agent_id_ = m.registered().agent_id();
        cv_.notify_all();
      } else if (m.has_job()) {
        jobs_seen_++;
        if (mode_ == Mode::kDieOnJob) {
          ctx_.TryCancel();
          break;
        }
        if (mode_ == Mode::kSilent) continue;
        proto::AgentMessage r;
        r.mutable_result()->set_job_id(m.job().job_id());
        const double cost = mode_ == Mode::kNanCost ? std::nan("") : 1e-3 * static_cast<double>(m.job().job_id() + 1);
        r.mutable_result()->mutable_result()->set_status(proto::OK);
        r.mutable_result()->mutable_result()->add_costs(cost);
        r.mutable_result()->mutable_result()->set_mean_cost(cost);
        stream_->Write(r);
      }
    }
    grpc::Status s = stream_->Finish();
    std::lock_guard<std::mutex> lock(mu_);
    final_ = s;
    ended_ = true;
    cv_.notify_all();
  }

  const Mode mode_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::Tracker::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<proto::AgentMessage, proto::TrackerMessage>> stream_;
  std::thread reader_;
  std::atomic<int> jobs_seen_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::string agent_id_;  // guarded by mu_
  bool ended_ = false;    // guarded by mu_
  grpc::Status final_;    // guarded by mu_
};

}  // namespace tunefleet::tracker

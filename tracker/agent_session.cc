#include "tracker/agent_session.h"

#include <spdlog/spdlog.h>

#include <string>
#include <system_error>
#include <thread>

#include "common/device_key.h"
#include "common/seconds.h"
#include "tracker/request_limits.h"

namespace tunefleet::tracker {

grpc::Status RunAgentSession(const SessionDeps& deps, grpc::ServerContext* ctx, AgentStream* stream) {
  TrackerState& state = deps.state;
  const std::string peer = ctx->peer();  // read now: once the call is cancelled gRPC says "unknown"
  proto::AgentMessage first;
  {
    const TimePoint deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(Seconds(deps.options.register_timeout));
    CallDeadlines::Armed armed = deps.deadlines.Arm(deadline, [ctx] { ctx->TryCancel(); });
    const bool read = stream->Read(&first);
    if (!armed.Disarm()) {
      if (const auto count = deps.unregistered.Occurred()) {
        spdlog::warn("agent session from {}: no RegisterAgent within {}; dropping the peer{}", peer,
                     SecondsText(deps.options.register_timeout),
                     *count == 1 ? "" : " (" + std::to_string(*count) + " such sessions since the last such line, "
                                        "said once a minute)");
      }
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "no RegisterAgent in time");
    }
    if (!read) return grpc::Status(grpc::StatusCode::CANCELLED, "stream ended before RegisterAgent");
  }
  // A peer can send these at will (the first check comes before the token's): said at most once a minute.
  auto malformed = [&](const std::string& what) {
    if (const auto count = deps.malformed.Occurred()) {
      spdlog::warn("agent session from {}: {}; dropping the peer{}", peer, what,
                   *count == 1 ? "" : " (" + std::to_string(*count) + " sessions dropped for their first message "
                                      "since the last such line, said once a minute)");
    }
  };
  if (!first.has_register_()) {
    malformed("first message is not RegisterAgent");
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "first message must be RegisterAgent");
  }
  const proto::RegisterAgent& reg = first.register_();
  if (grpc::Status s = deps.auth.Check(reg.token(), *ctx, "AgentSession"); !s.ok()) return s;
  if (const auto problem = DeviceKeyProblem(reg.key())) {  // the key itself is not logged: it may be anything
    malformed("RegisterAgent's key " + *problem);
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the device key " + *problem);
  }
  if (const auto problem = RegisterAgentProblem(reg)) {
    malformed("RegisterAgent's " + *problem);
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "RegisterAgent's " + *problem);
  }

  // Jobs for the agent queue up in the mailbox; it is drained only after Registered is written, so
  // Registered is always the first message the agent reads. The tracker cancels the call when it removes the agent
  // (under its lock, and never after the RemoveAgent below returns, so `ctx` is still alive then).
  auto mailbox = std::make_shared<AgentMailbox>();
  Result<std::string> added = state.AddAgent(reg, peer, mailbox, [ctx] { ctx->TryCancel(); });
  if (!added.ok()) return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, added.status().message());
  const std::string agent_id = *added;
  proto::TrackerMessage registered;
  registered.mutable_registered()->set_agent_id(agent_id);
  if (!stream->Write(registered)) {
    state.RemoveAgent(agent_id, "could not write Registered");
    return grpc::Status(grpc::StatusCode::CANCELLED, "agent stream broken");
  }

  std::thread reader;
  try {
    reader = std::thread([&] {
      proto::AgentMessage msg;
      while (stream->Read(&msg)) {
        if (Status s = state.OnAgentMessage(agent_id, msg); !s.ok()) break;  // already removed; reason logged
      }
      state.RemoveAgent(agent_id, "stream ended");
      ctx->TryCancel();  // a Write blocked on a peer that stopped reading would otherwise hold the writer
    });
  } catch (const std::system_error& e) {
    // Out of threads (a process limit): the agent is removed while `ctx` lives. Left registered, it was leasable with
    // nobody to read its jobs, and its removal later cancelled a call already freed (the tracker crashed).
    state.RemoveAgent(agent_id, std::string("no thread for its session: ") + e.what());
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        std::string("the tracker could start no thread for this session: ") + e.what());
  }

  std::vector<proto::TrackerMessage> out;
  while (true) {
    const auto took = mailbox->Take(&out, std::chrono::milliseconds(500));
    if (took == AgentMailbox::Took::kClosed) break;
    bool broken = false;
    for (const auto& m : out) {
      if (!stream->Write(m)) {
        broken = true;
        break;
      }
    }
    if (broken) {
      state.RemoveAgent(agent_id, "write to agent failed");
      break;
    }
  }
  ctx->TryCancel();  // unblocks the reader's Read
  reader.join();
  return grpc::Status::OK;
}

}  // namespace tunefleet::tracker

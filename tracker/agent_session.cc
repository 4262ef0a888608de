#include "tracker/agent_session.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "common/device_key.h"

namespace tunefleet::tracker {

grpc::Status RunAgentSession(TrackerState& state, const TokenCheck& auth, grpc::ServerContext* ctx,
                             AgentStream* stream) {
  proto::AgentMessage first;
  if (!stream->Read(&first)) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "stream ended before RegisterAgent");
  }
  if (!first.has_register_()) {
    spdlog::warn("agent session from {}: first message is not RegisterAgent; dropping the peer", ctx->peer());
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "first message must be RegisterAgent");
  }
  const proto::RegisterAgent& reg = first.register_();
  if (grpc::Status s = auth.Check(reg.token(), *ctx, "AgentSession"); !s.ok()) return s;
  if (const auto problem = DeviceKeyProblem(reg.key())) {  // the key itself is not logged: it may be anything
    spdlog::warn("agent session from {}: RegisterAgent's key {}; dropping the peer", ctx->peer(), *problem);
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the device key " + *problem);
  }

  // Jobs for the agent queue up in the mailbox; it is drained only after Registered is written, so
  // Registered is always the first message the agent reads.
  auto mailbox = std::make_shared<AgentMailbox>();
  Result<std::string> added = state.AddAgent(reg, ctx->peer(), mailbox);
  if (!added.ok()) return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, added.status().message());
  const std::string agent_id = *added;
  proto::TrackerMessage registered;
  registered.mutable_registered()->set_agent_id(agent_id);
  if (!stream->Write(registered)) {
    state.RemoveAgent(agent_id, "could not write Registered");
    return grpc::Status(grpc::StatusCode::CANCELLED, "agent stream broken");
  }

  std::thread reader([&] {
    proto::AgentMessage msg;
    while (stream->Read(&msg)) {
      if (Status s = state.OnAgentMessage(agent_id, msg); !s.ok()) break;  // already removed; reason logged
    }
    state.RemoveAgent(agent_id, "stream ended");
  });

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

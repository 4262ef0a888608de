#include "tracker/agent_registry.h"

namespace tunefleet::tracker {

Registration AgentRegistry::Register(const proto::RegisterAgent& msg, const std::string& peer, TimePoint now) {
  Registration reg;
  reg.agent_id = "agent-" + std::to_string(next_id_++);
  auto dit = departed_.find(DeviceKey(msg.key(), msg.device().fingerprint()));
  if (dit != departed_.end() && !dit->second.empty()) {
    reg.previous_agent_id = dit->second.front();
    dit->second.pop_front();
    if (dit->second.empty()) departed_.erase(dit);
  }
  AgentRecord rec;
  rec.agent_id = reg.agent_id;
  rec.key = msg.key();
  rec.peer = peer;
  rec.device = msg.device();
  rec.last_seen = now;
  agents_[reg.agent_id] = std::move(rec);
  return reg;
}

void AgentRegistry::Touch(const std::string& agent_id, TimePoint now) {
  auto it = agents_.find(agent_id);
  if (it != agents_.end()) it->second.last_seen = now;
}

void AgentRegistry::CountJob(const std::string& agent_id) {
  auto it = agents_.find(agent_id);
  if (it != agents_.end()) it->second.jobs_done++;
}

std::vector<std::string> AgentRegistry::Stale(TimePoint now, Seconds timeout) const {
  std::vector<std::string> stale;
  for (const auto& [id, rec] : agents_) {
    if (now - rec.last_seen > timeout) stale.push_back(id);
  }
  return stale;
}

bool AgentRegistry::Remove(const std::string& agent_id, bool left) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return false;
  if (left) {
    agents_.erase(it);
    return true;
  }
  // Only a log line's hint ("back as"): bounded, so that agents that never come back cannot grow it forever.
  const std::string device_key = DeviceKey(it->second.key, it->second.device.fingerprint());
  if (!departed_.count(device_key) && departed_.size() >= kMaxDepartedDevices) departed_.erase(departed_.begin());
  std::deque<std::string>& ids = departed_[device_key];
  ids.push_back(agent_id);
  if (ids.size() > kMaxDepartedPerDevice) ids.pop_front();
  agents_.erase(it);
  return true;
}

const AgentRecord* AgentRegistry::Find(const std::string& agent_id) const {
  auto it = agents_.find(agent_id);
  return it == agents_.end() ? nullptr : &it->second;
}

}  // namespace tunefleet::tracker

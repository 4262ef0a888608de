// AgentRegistry: the agents connected to the tracker, by id: key, device, peer, last message time, jobs
// done. Pure logic (time is a parameter); the owner decides what to do with stale agents.
//
// A device is identified by (key, fingerprint). The fingerprint names a device model + driver, so two
// identical phones share one; a registration counts as a reconnect when an agent with the same
// (key, fingerprint) was lost earlier (not one that left on purpose) and has not been matched by another reconnect
// yet.
//
// Thread safety: none; the owner serialises calls.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "proto/tunefleet.pb.h"
#include "tracker/lease_table.h"

namespace tunefleet::tracker {

struct AgentRecord {
  std::string agent_id;
  std::string key;
  std::string peer;  // gRPC peer string ("ipv4:127.0.0.1:5555")
  proto::DeviceInfo device;
  TimePoint last_seen;  // last message of any kind
  uint64_t jobs_done = 0;  // results relayed by the tracker
};

struct Registration {
  std::string agent_id;
  std::string previous_agent_id;  // non-empty when this is a reconnect of a device seen before
};

class AgentRegistry {
 public:
  AgentRegistry() = default;
  AgentRegistry(const AgentRegistry&) = delete;
  AgentRegistry& operator=(const AgentRegistry&) = delete;

  Registration Register(const proto::RegisterAgent& msg, const std::string& peer, TimePoint now);
  // Records a message from the agent. Unknown ids are ignored.
  void Touch(const std::string& agent_id, TimePoint now);
  void CountJob(const std::string& agent_id);
  // Agents whose last message is older than `timeout` at `now`.
  std::vector<std::string> Stale(TimePoint now, Seconds timeout) const;
  // Forgets the agent; false when unknown (already removed). An agent that `left` (stopped on purpose) is not
  // remembered for a reconnect: the device's next registration is a new start.
  bool Remove(const std::string& agent_id, bool left = false);

  // nullptr when unknown; valid until the next non-const call.
  const AgentRecord* Find(const std::string& agent_id) const;
  const std::map<std::string, AgentRecord>& agents() const { return agents_; }

 private:
  static std::string DeviceKey(const std::string& key, const std::string& fingerprint) {
    return key + '\n' + fingerprint;
  }

  static constexpr size_t kMaxDepartedDevices = 1024;
  static constexpr size_t kMaxDepartedPerDevice = 16;

  uint64_t next_id_ = 1;
  std::map<std::string, AgentRecord> agents_;
  // (key, fingerprint) -> ids of agents that went away, oldest first: at most kMaxDepartedPerDevice ids for each of
  // at most kMaxDepartedDevices devices (past those, the oldest id, or some device's ids, are forgotten).
  std::map<std::string, std::deque<std::string>> departed_;
};

}  // namespace tunefleet::tracker

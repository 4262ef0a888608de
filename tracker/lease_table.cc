#include "tracker/lease_table.h"

#include <algorithm>
#include <cstdio>
#include <random>

namespace tunefleet::tracker {
namespace {

// 64 bits from the system's random source, as 16 hex digits: a lease id must not be guessable, since whoever knows
// it can measure on, renew or release the lease (a tracker without --token checks nothing else).
std::string RandomSuffix() {
  std::random_device rd;
  const uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

}  // namespace

void LeaseTable::AddAgent(const std::string& agent_id, const std::string& key) {
  if (agents_.count(agent_id)) return;
  agents_[agent_id] = AgentSlot{key, ""};
  KeyState& ks = keys_[key];
  ks.registered++;
  ks.free.push_back(agent_id);
}

std::string LeaseTable::RemoveAgent(const std::string& agent_id) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return "";
  const std::string lease_id = it->second.lease_id;
  auto kit = keys_.find(it->second.key);
  if (kit != keys_.end()) {
    kit->second.registered--;
    std::erase(kit->second.free, agent_id);
    ForgetIfIdle(kit);
  }
  if (!lease_id.empty()) {
    auto lit = leases_.find(lease_id);
    if (lit != leases_.end()) std::erase(lit->second.agent_ids, agent_id);
  }
  agents_.erase(it);
  return lease_id;
}

uint64_t LeaseTable::Enqueue(AcquireSpec spec) {
  const uint64_t id = next_seq_++;
  Insert(id, std::move(spec));
  return id;
}

void LeaseTable::Requeue(uint64_t waiter_id, AcquireSpec spec) {
  if (waiter_key_.count(waiter_id)) return;  // still queued
  Insert(waiter_id, std::move(spec));
}

void LeaseTable::Insert(uint64_t waiter_id, AcquireSpec spec) {
  spec.count = std::max<uint32_t>(spec.count, 1);
  spec.min_count = std::clamp<uint32_t>(spec.min_count, 1, spec.count);
  waiter_key_[waiter_id] = spec.key;
  if (!spec.waiting_since) spec.waiting_since = Clock::now();  // a requeued waiter keeps the time it had
  KeyState& ks = keys_[spec.key];
  const TimePoint since = *spec.waiting_since;
  ks.queue.insert(Waiter{spec.priority, since, waiter_id, std::move(spec)});
}

void LeaseTable::CancelWaiter(uint64_t waiter_id) {
  auto it = waiter_key_.find(waiter_id);
  if (it == waiter_key_.end()) return;
  if (auto kit = keys_.find(it->second); kit != keys_.end()) {
    std::erase_if(kit->second.queue, [&](const Waiter& w) { return w.seq == waiter_id; });
    ForgetIfIdle(kit);
  }
  waiter_key_.erase(it);
}

std::vector<Grant> LeaseTable::Pump(TimePoint now) {
  std::vector<Grant> grants;
  for (auto& [key, ks] : keys_) {
    for (auto it = ks.queue.begin(); it != ks.queue.end();) {
      const Waiter& head = *it;
      // A waiter wanting more agents than the key has registered cannot be granted before more register: it waits
      // without holding up the requests behind it (it blocked its key's whole queue).
      if (head.spec.min_count > ks.registered) {
        ++it;
        continue;
      }
      if (ks.free.size() < head.spec.min_count) break;  // the head blocks the rest
      const size_t n = std::min<size_t>(head.spec.count, ks.free.size());
      Lease lease;
      lease.lease_id = "lease-" + std::to_string(next_lease_++) + "-" + RandomSuffix();
      lease.key = key;
      lease.client = head.spec.client;
      lease.expiry = now + std::chrono::duration_cast<Clock::duration>(ttl_);
      lease.agent_ids.assign(ks.free.begin(), ks.free.begin() + static_cast<long>(n));
      ks.free.erase(ks.free.begin(), ks.free.begin() + static_cast<long>(n));
      for (const auto& a : lease.agent_ids) agents_[a].lease_id = lease.lease_id;
      leases_[lease.lease_id] = lease;
      grants.push_back(Grant{head.seq, std::move(lease)});
      waiter_key_.erase(head.seq);
      it = ks.queue.erase(it);
    }
  }
  return grants;
}

Status LeaseTable::Renew(const std::string& lease_id, TimePoint now) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return NoLeaseError(lease_id);
  it->second.expiry = now + std::chrono::duration_cast<Clock::duration>(ttl_);
  return Status::OK();
}

void LeaseTable::RenewAll(TimePoint now) {
  for (auto& [id, lease] : leases_) lease.expiry = now + std::chrono::duration_cast<Clock::duration>(ttl_);
}

void LeaseTable::ForgetIfIdle(std::map<std::string, KeyState>::iterator key) {
  if (key->second.registered == 0 && key->second.free.empty() && key->second.queue.empty()) keys_.erase(key);
}

void LeaseTable::FreeAgents(const Lease& lease) {
  for (const auto& a : lease.agent_ids) {
    auto it = agents_.find(a);
    if (it == agents_.end()) continue;
    it->second.lease_id.clear();
    keys_[it->second.key].free.push_back(a);
  }
}

Status LeaseTable::Release(const std::string& lease_id) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return NoLeaseError(lease_id);
  FreeAgents(it->second);
  leases_.erase(it);
  return Status::OK();
}

std::vector<Lease> LeaseTable::Expire(TimePoint now) {
  std::vector<Lease> ended;
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (it->second.pins == 0 && it->second.expiry <= now) {
      FreeAgents(it->second);
      ended.push_back(std::move(it->second));
      it = leases_.erase(it);
    } else {
      ++it;
    }
  }
  return ended;
}

Status LeaseTable::Pin(const std::string& lease_id) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return NoLeaseError(lease_id);
  it->second.pins++;
  return Status::OK();
}

void LeaseTable::Unpin(const std::string& lease_id, TimePoint now) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return;
  if (it->second.pins > 0) it->second.pins--;
  it->second.expiry = now + std::chrono::duration_cast<Clock::duration>(ttl_);
}

const Lease* LeaseTable::Find(const std::string& lease_id) const {
  auto it = leases_.find(lease_id);
  return it == leases_.end() ? nullptr : &it->second;
}

std::string LeaseTable::LeaseOf(const std::string& agent_id) const {
  auto it = agents_.find(agent_id);
  return it == agents_.end() ? "" : it->second.lease_id;
}

KeyCounts LeaseTable::Counts(const std::string& key) const {
  KeyCounts c;
  auto it = keys_.find(key);
  if (it == keys_.end()) return c;
  c.registered = it->second.registered;
  c.free = static_cast<uint32_t>(it->second.free.size());
  c.leased = c.registered - c.free;
  c.waiting = static_cast<uint32_t>(it->second.queue.size());
  return c;
}

std::vector<AcquireSpec> LeaseTable::Queue(const std::string& key) const {
  std::vector<AcquireSpec> queue;
  auto it = keys_.find(key);
  if (it == keys_.end()) return queue;
  for (const Waiter& w : it->second.queue) {  // a std::set: in serving order
    queue.push_back(w.spec);
    queue.back().waiting_since = w.since;
  }
  return queue;
}

std::vector<std::string> LeaseTable::Keys() const {
  std::vector<std::string> keys;
  for (const auto& [k, ks] : keys_) keys.push_back(k);  // an idle key's state is erased (ForgetIfIdle)
  return keys;
}

}  // namespace tunefleet::tracker

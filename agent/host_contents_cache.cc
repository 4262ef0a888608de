#include "agent/host_contents_cache.h"

#include "agent/host_buffer.h"

namespace tunefleet::agent {
namespace {

// The spec without its name: buffers of different programs (or names) with equal contents share an entry.
std::string Key(const proto::BufferSpec& spec) {
  proto::BufferSpec key = spec;
  key.clear_name();
  return key.SerializeAsString();
}

}  // namespace

HostContentsCache::Bytes HostContentsCache::Get(const proto::BufferSpec& spec) {
  const std::string key = Key(spec);
  if (auto found = entries_.find(key); found != entries_.end()) {
    lru_.splice(lru_.begin(), lru_, found->second.position);
    return found->second.bytes;
  }
  Bytes bytes = std::make_shared<const std::vector<uint8_t>>(InitialContents(spec));
  ++fills_;
  const size_t size = bytes->size();
  if (size > max_bytes_) return bytes;
  while (bytes_ + size > max_bytes_ && !lru_.empty()) {
    auto oldest = entries_.find(lru_.back());
    bytes_ -= oldest->second.bytes->size();
    entries_.erase(oldest);
    lru_.pop_back();
  }
  lru_.push_front(key);
  entries_.emplace(key, Entry{bytes, lru_.begin()});
  bytes_ += size;
  return bytes;
}

}  // namespace tunefleet::agent

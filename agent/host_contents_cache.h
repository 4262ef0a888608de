// The initial bytes of program buffers, kept between jobs. Every job of a task uploads the same inputs (a buffer's
// contents depend only on its spec: type, count, init, seed and range), and for large tasks filling them on the
// host takes longer than the kernel runs, time during which the job holds the device. With the cache a buffer is
// filled once per distinct spec; the executor fills the next job's buffers before it takes the device lock.
// Bounded: least recently used entries go first once the bytes held would pass the limit; a buffer larger than
// the limit is filled for its job and not kept.
// Thread safety: none (one executor, one thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "proto/tunefleet.pb.h"

namespace tunefleet::agent {

class HostContentsCache {
 public:
  using Bytes = std::shared_ptr<const std::vector<uint8_t>>;
  static constexpr size_t kDefaultMaxBytes = size_t{512} << 20;

  explicit HostContentsCache(size_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}

  // InitialContents(spec) (agent/host_buffer.h), from the cache when an equal spec was filled before.
  Bytes Get(const proto::BufferSpec& spec);

  size_t bytes() const { return bytes_; }
  size_t entries() const { return entries_.size(); }
  uint64_t fills() const { return fills_; }  // buffers filled (cache misses)

 private:
  struct Entry {
    Bytes bytes;
    std::list<std::string>::iterator position;  // in lru_
  };
  size_t max_bytes_;
  size_t bytes_ = 0;
  uint64_t fills_ = 0;
  std::list<std::string> lru_;  // most recently used first
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace tunefleet::agent

#include "agent/compile_cache.h"

#include <chrono>

#include "common/fnv_hash.h"

namespace tunefleet::agent {

CompileCache::CompileCache(const ClApi* api, cl_context context, cl_device_id device, std::string device_identity,
                           size_t capacity)
    : api_(api),
      context_(context),
      device_(device),
      device_identity_(std::move(device_identity)),
      capacity_(capacity == 0 ? 1 : capacity) {}

uint64_t CompileCache::Key(const std::string& source, const std::string& options) const {
  return FnvHash().Add(source).Add(options).Add(device_identity_).value();
}

Result<CompileCache::Hit> CompileCache::Get(const std::string& source, const std::string& options) {
  const uint64_t key = Key(source, options);
  auto found = entries_.find(key);
  // The full strings are compared too: a hash collision must never run the wrong kernel.
  if (found != entries_.end() && found->second.source == source && found->second.options == options) {
    return Hit{found->second.program(), 0.0};
  }

  const auto start = std::chrono::steady_clock::now();
  TF_ASSIGN_OR_RETURN(Program program, BuildProgram(*api_, context_, device_, source, options));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (found != entries_.end()) {  // collision: the newer program wins the slot, and is the newest in the order
    entries_.erase(found);
    std::erase(order_, key);
  }
  while (entries_.size() >= capacity_ && !order_.empty()) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
  cl_program raw = program();
  entries_.insert_or_assign(key, Entry{source, options, std::move(program)});
  order_.push_back(key);
  return Hit{raw, seconds};
}

}  // namespace tunefleet::agent

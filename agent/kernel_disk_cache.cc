#include "agent/kernel_disk_cache.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

namespace tunefleet::agent {
namespace fs = std::filesystem;
namespace {

struct Entry {
  fs::path path;
  uint64_t bytes = 0;
  fs::file_time_type newest = fs::file_time_type::min();  // not {}: libstdc++'s file clock counts from 2174
};

// The bytes of the regular files at or below `path`, and the newest time among them and the folders.
void Measure(const fs::path& path, Entry& entry) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (ec) return;
  const fs::file_time_type time = fs::last_write_time(path, ec);
  if (!ec) entry.newest = std::max(entry.newest, time);
  if (fs::is_regular_file(status)) {
    const uintmax_t size = fs::file_size(path, ec);
    if (!ec) entry.bytes += size;
    return;
  }
  if (!fs::is_directory(status)) return;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const fs::file_time_type t = it->last_write_time(ec);
    if (!ec) entry.newest = std::max(entry.newest, t);
    ec.clear();
    if (it->is_regular_file(ec) && !ec) {
      const uintmax_t size = it->file_size(ec);
      if (!ec) entry.bytes += size;
    }
    ec.clear();
  }
}

// The entries of `dir`: each thing two levels below it (PoCL's dir/XX/PROGRAM), and whatever is not a folder one
// level below it.
std::vector<Entry> Entries(const fs::path& dir) {
  std::vector<Entry> out;
  std::error_code ec;
  for (fs::directory_iterator top(dir, ec), end; !ec && top != end; top.increment(ec)) {
    std::error_code type_ec;
    if (!top->is_directory(type_ec) || top->is_symlink(type_ec)) {
      Entry e{top->path()};
      Measure(top->path(), e);
      out.push_back(std::move(e));
      continue;
    }
    std::error_code inner_ec;
    for (fs::directory_iterator it(top->path(), inner_ec), inner_end; !inner_ec && it != inner_end;
         it.increment(inner_ec)) {
      Entry e{it->path()};
      Measure(it->path(), e);
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<KernelDiskCache>> KernelDiskCache::Claim(const fs::path& root, uint64_t limit_bytes) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return Status::InvalidArgument("cannot make the kernel cache folder " + root.string() + ": " + ec.message());
  for (int slot = 0; slot < kMaxSlots; ++slot) {
    const fs::path lock_path = root / ("slot-" + std::to_string(slot) + ".lock");
    OwnedFd fd(open(lock_path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600));
    if (!fd.valid()) {
      return Status::InvalidArgument("cannot open " + lock_path.string() + ": " + std::strerror(errno));
    }
    if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) continue;  // another agent's
      return Status::Unavailable("cannot lock " + lock_path.string() + ": " + std::strerror(errno));
    }
    const fs::path dir = root / ("slot-" + std::to_string(slot));
    fs::create_directories(dir, ec);
    if (ec) return Status::InvalidArgument("cannot make the kernel cache folder " + dir.string() + ": " + ec.message());
    return std::unique_ptr<KernelDiskCache>(new KernelDiskCache(std::move(fd), dir, limit_bytes));
  }
  return Status::Unavailable("all " + std::to_string(kMaxSlots) + " kernel cache slots of " + root.string() +
                             " are held by other agents");
}

uint64_t KernelDiskCache::Bytes() const {
  Entry all{dir_};
  Measure(dir_, all);
  return all.bytes;
}

Result<KernelDiskCache::Pruned> KernelDiskCache::Prune() {
  std::vector<Entry> entries = Entries(dir_);
  uint64_t total = 0;
  for (const Entry& e : entries) total += e.bytes;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.newest < b.newest; });
  Pruned pruned;
  for (const Entry& e : entries) {
    if (total <= limit_bytes_ / 2) break;
    std::error_code ec;
    fs::remove_all(e.path, ec);
    if (ec) return Status::IOError("cannot remove " + e.path.string() + ": " + ec.message());
    ++pruned.entries;
    pruned.bytes += e.bytes;
    total -= e.bytes;
  }
  // The two-letter folders that the removals emptied (gathered first: a folder is not changed while it is read).
  std::vector<fs::path> emptied;
  std::error_code ec;
  for (fs::directory_iterator top(dir_, ec), end; !ec && top != end; top.increment(ec)) {
    std::error_code inner;
    if (top->is_directory(inner) && !top->is_symlink(inner) && fs::is_empty(top->path(), inner) && !inner) {
      emptied.push_back(top->path());
    }
  }
  for (const fs::path& folder : emptied) fs::remove(folder, ec);
  pruned.left = total;
  return pruned;
}

}  // namespace tunefleet::agent

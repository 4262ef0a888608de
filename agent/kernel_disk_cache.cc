#include "agent/kernel_disk_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace tunefleet::agent {
namespace fs = std::filesystem;
namespace {

struct Entry {
  fs::path path;
  uint64_t bytes = 0;
  int64_t newest_ns = 0;  // the newest modification time of the entry and what is below it
};

// Adds what `path` itself holds to `entry`, as lstat sees it: a symbolic link counts as a link (its target, which
// may lie outside the folder, is neither counted nor removed).
void Add(const fs::path& path, Entry& entry) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return;  // gone meanwhile
  entry.newest_ns = std::max<int64_t>(entry.newest_ns, int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec);
  if (S_ISREG(st.st_mode)) entry.bytes += static_cast<uint64_t>(st.st_size);
}

// The bytes of the regular files at or below `path`, and the newest time among them and the folders. Links are not
// followed.
Entry Measure(const fs::path& path) {
  Entry entry{path};
  Add(path, entry);
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(path, ec)) || ec) return entry;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    Add(it->path(), entry);
  }
  return entry;
}

// The entries of `dir` (the slot, followed when it is a link): each thing two levels below it (PoCL's
// dir/XX/PROGRAM), and whatever is not a folder one level below it.
std::vector<Entry> Entries(const fs::path& dir) {
  std::vector<Entry> out;
  std::error_code ec;
  for (fs::directory_iterator top(dir, ec), end; !ec && top != end; top.increment(ec)) {
    std::error_code type_ec;
    if (top->is_symlink(type_ec) || !top->is_directory(type_ec)) {
      out.push_back(Measure(top->path()));
      continue;
    }
    std::error_code inner_ec;
    for (fs::directory_iterator it(top->path(), inner_ec), inner_end; !inner_ec && it != inner_end;
         it.increment(inner_ec)) {
      out.push_back(Measure(it->path()));
    }
  }
  return out;
}

// Locks slot `slot` of `root`: its lock file (not followed when it is a link; made when missing, if `create`) held
// with flock. nullopt when another agent holds it, or it has no lock file and `create` is false; an error when this
// agent cannot use it.
Result<std::optional<OwnedFd>> LockSlot(const fs::path& root, int slot, bool create) {
  const fs::path lock_path = root / ("slot-" + std::to_string(slot) + ".lock");
  OwnedFd fd(open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0600));
  if (!fd.valid()) {
    if (errno == ENOENT && !create) return std::optional<OwnedFd>();
    return Status::InvalidArgument("cannot open " + lock_path.string() + ": " + std::strerror(errno));
  }
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return std::optional<OwnedFd>();  // another agent's
    return Status::InvalidArgument("cannot lock " + lock_path.string() + ": " + std::strerror(errno));
  }
  return std::optional<OwnedFd>(std::move(fd));
}

// The folder of slot `slot`, made when missing and writable.
Result<fs::path> SlotDir(const fs::path& root, int slot) {
  const fs::path dir = root / ("slot-" + std::to_string(slot));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::InvalidArgument("cannot make the kernel cache folder " + dir.string() + ": " + ec.message());
  if (access(dir.c_str(), R_OK | W_OK | X_OK) != 0) {
    return Status::InvalidArgument("cannot write the kernel cache folder " + dir.string() + ": " +
                                   std::strerror(errno));
  }
  return dir;
}

// `s` without its trailing blanks: owners compare so ("...\n" and "...\r\n" are one owner).
std::string WithoutTrailingBlanks(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// What the lock file of a slot says: the owner its last agent wrote (at most 4 KB read), without trailing blanks.
std::string OwnerOf(int fd) {
  char buf[4096];
  const ssize_t n = pread(fd, buf, sizeof buf, 0);
  return WithoutTrailingBlanks(n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string());
}

}  // namespace

Result<std::unique_ptr<KernelDiskCache>> KernelDiskCache::Claim(const fs::path& root_given, uint64_t limit_bytes,
                                                                const std::string& owner_given) {
  std::error_code ec;
  const fs::path root = fs::absolute(root_given, ec);
  if (ec) return Status::InvalidArgument("cannot resolve " + root_given.string() + ": " + ec.message());
  fs::create_directories(root, ec);
  if (ec) return Status::InvalidArgument("cannot make the kernel cache folder " + root.string() + ": " + ec.message());
  const std::string owner = WithoutTrailingBlanks(owner_given);
  // Three passes, each over the slots in order: a free slot that an agent of the same owner left (its kernels are
  // this device's; only existing lock files are opened), then one that no agent ever named (no lock file yet, or an
  // empty one), then any free one. Only the slot taken gets a lock file and a folder made. A slot this agent cannot
  // use (another user's lock file, a file where its folder should be) is passed over; the first such problem is said
  // when no slot is left.
  enum class Pass { kOwn, kUnowned, kAny };
  std::optional<Status> first_problem;
  for (const Pass pass : {Pass::kOwn, Pass::kUnowned, Pass::kAny}) {
    if (pass == Pass::kOwn && owner.empty()) continue;
    for (int slot = 0; slot < kMaxSlots; ++slot) {
      auto locked = LockSlot(root, slot, /*create=*/pass != Pass::kOwn);
      if (!locked.ok()) {
        if (!first_problem) first_problem = locked.status();
        continue;
      }
      if (!locked->has_value()) continue;
      OwnedFd fd = std::move(**locked);
      const std::string was = OwnerOf(fd.get());
      if ((pass == Pass::kOwn && was != owner) || (pass == Pass::kUnowned && !was.empty())) continue;  // released
      Result<fs::path> dir = SlotDir(root, slot);
      if (!dir.ok()) {
        if (!first_problem) first_problem = dir.status();
        continue;
      }
      const std::string text = owner.empty() ? std::string() : owner + "\n";
      if (was != owner && (ftruncate(fd.get(), 0) != 0 ||
                           pwrite(fd.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))) {
        // Not worth refusing the slot for: the next agent of this owner only misses its kernels.
        (void)!ftruncate(fd.get(), 0);
      }
      return std::unique_ptr<KernelDiskCache>(new KernelDiskCache(std::move(fd), *dir, limit_bytes));
    }
  }
  if (first_problem) {
    return Status::InvalidArgument("no kernel cache slot of " + root.string() + " is free and usable (the first: " +
                                   first_problem->message() + ")");
  }
  return Status::Unavailable("all " + std::to_string(kMaxSlots) + " kernel cache slots of " + root.string() +
                             " are held by other agents");
}

uint64_t KernelDiskCache::Bytes() const {
  uint64_t bytes = 0;
  for (const Entry& e : Entries(dir_)) bytes += e.bytes;
  return bytes;
}

KernelDiskCache::Pruned KernelDiskCache::Prune() { return PruneTo(limit_bytes_ / 2); }

int KernelDiskCache::RemoveLeftovers() {
  std::vector<fs::path> leftovers;  // gathered first: a folder is not changed while it is read
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && !it->is_symlink(type_ec) &&
        it->path().filename().string().rfind("tempfile_", 0) == 0) {
      leftovers.push_back(it->path());
    }
  }
  int removed = 0;
  for (const fs::path& f : leftovers) removed += fs::remove(f, ec) ? 1 : 0;
  return removed;
}

KernelDiskCache::Pruned KernelDiskCache::PruneTo(uint64_t keep_bytes) {
  std::vector<Entry> entries = Entries(dir_);
  uint64_t total = 0;
  for (const Entry& e : entries) total += e.bytes;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.newest_ns < b.newest_ns; });
  Pruned pruned;
  for (const Entry& e : entries) {
    if (total - pruned.stuck_bytes <= keep_bytes) break;
    std::error_code ec;
    fs::remove_all(e.path, ec);  // a link is removed, not what it points to
    if (ec) {
      // Left, and passed over: an entry that cannot be removed (another user's, a read-only folder) does not stop
      // the pruning of the others.
      if (pruned.failed++ == 0) pruned.first_failure = "cannot remove " + e.path.string() + ": " + ec.message();
      const uint64_t remaining = std::min(Measure(e.path).bytes, e.bytes);
      pruned.bytes += e.bytes - remaining;  // what went before the failure
      total -= e.bytes - remaining;
      pruned.stuck_bytes += remaining;
      continue;
    }
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

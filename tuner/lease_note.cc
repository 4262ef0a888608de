#include "tuner/lease_note.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/host_name.h"
#include "common/json_parse.h"
#include "common/still_linked.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

constexpr long kMaxNoteBytes = 4096;
// A run that opened the name as another run removed it takes the new file; a few turns at most in practice.
constexpr int kMaxRemovedTurns = 100;

bool ProcessGone(long pid) { return pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

// The note's text, read from the start of `fd`; "" when it cannot be read or is too long to be a note.
std::string ReadNote(int fd) {
  std::string text(kMaxNoteBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {};
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > static_cast<size_t>(kMaxNoteBytes)) return {};
  text.resize(got);
  return text;
}

// The note in `text` when it is one, and whether its run is gone; nullopt when it is not a note or its run may live.
// Called with the note's lock held: a note that says it is locked by its writer is a dead run's.
std::optional<NotedLease> DeadRunsNote(const std::string& text, const std::string& host) {
  const nlohmann::json j = ParseJson(text);
  if (!j.is_object() || !j.value("lease_id", nlohmann::json()).is_string() ||
      !j.value("tracker", nlohmann::json()).is_string() || !j.value("pid", nlohmann::json()).is_number_integer() ||
      !j.value("host", nlohmann::json()).is_string()) {
    return std::nullopt;
  }
  NotedLease n{j["lease_id"].get<std::string>(), j["tracker"].get<std::string>(), j["pid"].get<long>(),
               j["host"].get<std::string>()};
  const bool locked_by_writer = j.value("flock", nlohmann::json()).is_boolean() && j["flock"].get<bool>();
  if (locked_by_writer) return n;
  if (n.host == host && n.pid != getpid() && ProcessGone(n.pid)) return n;  // a note of before the lock
  return std::nullopt;
}

}  // namespace

std::string LeaseNote::PathFor(const std::string& prefix) { return prefix + ".lease." + std::to_string(getpid()); }

Result<LeaseNote> LeaseNote::Write(const std::string& prefix, const std::string& lease_id,
                                   const std::string& tracker) {
  const std::string path = PathFor(prefix);
  const std::string text = nlohmann::json{{"lease_id", lease_id},
                                          {"tracker", tracker},
                                          {"pid", getpid()},
                                          {"host", HostName()},
                                          {"flock", true}}
                               .dump() +
                           "\n";
  for (int turn = 0; turn < kMaxRemovedTurns; ++turn) {
    OwnedFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666));
    if (!fd.valid()) return Status::IOError(path + ": cannot write the lease note: " + std::strerror(errno));
    // Blocks only while another run reads a note of this name (a dead run's of the same pid) for microseconds.
    int locked;
    do {
      locked = ::flock(fd.get(), LOCK_EX);
    } while (locked != 0 && errno == EINTR);
    if (locked != 0) return Status::IOError(path + ": cannot lock the lease note: " + std::strerror(errno));
    if (!StillLinked(fd.get(), path)) continue;  // a run that found a dead run's note of this name removed it
    errno = 0;
    if (::ftruncate(fd.get(), 0) != 0 ||
        ::pwrite(fd.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      const std::string why = errno != 0 ? std::strerror(errno) : "a short write";
      ::unlink(path.c_str());
      return Status::IOError(path + ": cannot write the lease note: " + why);
    }
    return LeaseNote(path, std::move(fd));
  }
  return Status::IOError(path + ": cannot write the lease note: it was removed as it was opened " +
                         std::to_string(kMaxRemovedTurns) + " times in a row");
}

LeaseNote::LeaseNote(LeaseNote&& other) noexcept : path_(std::move(other.path_)), fd_(std::move(other.fd_)) {}

LeaseNote& LeaseNote::operator=(LeaseNote&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::move(other.path_);
    fd_ = std::move(other.fd_);
  }
  return *this;
}

LeaseNote::~LeaseNote() { Remove(); }

void LeaseNote::Remove() {
  if (!fd_.valid()) return;
  // Removed while still locked, so that no reader takes the lock of a file that still names a released lease.
  ::unlink(path_.c_str());
  fd_.reset();
}

std::vector<NotedLease> FindDeadRunLeases(const std::string& prefix) {
  std::vector<NotedLease> out;
  const fs::path base(prefix);
  const fs::path dir = base.parent_path().empty() ? fs::path(".") : base.parent_path();
  const std::string stem = base.filename().string() + ".lease.";
  const std::string own = fs::path(LeaseNote::PathFor(prefix)).filename().string();
  const std::string host = HostName();
  std::error_code ec;
  // Stepped with an error code: a range-for's step throws when reading the folder fails part-way.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    if (name.rfind(stem, 0) != 0 || name == own || !entry.is_regular_file(ec)) continue;
    const std::string path = entry.path().string();
    // Read and write: where flock is emulated by fcntl locks (NFS), an exclusive lock needs a writable descriptor.
    OwnedFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (!fd.valid() && errno == EACCES) fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (!fd.valid()) continue;
    // Held: its run lives (or reads it this instant, and lists it itself).
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 || !StillLinked(fd.get(), path)) continue;
    std::optional<NotedLease> dead = DeadRunsNote(ReadNote(fd.get()), host);
    if (dead) {
      ::unlink(path.c_str());  // while still locked, as Remove does
      out.push_back(std::move(*dead));
    }
  }
  return out;
}

}  // namespace tunefleet

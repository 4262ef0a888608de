// LeaseNote: a run's lease, noted in a small file beside its tuning log (LOG.lease.PID: the lease id, the tracker,
// the pid and host), so that a run started again after `kill -9`, on this host or on another one that shares the
// log's folder, can release the lease the killed run still holds instead of waiting out the tracker's --lease-ttl.
// The lease id is the capability: only a process that can read the log's directory learns it.
//
// The note says by its lock whether its run lives: the writer holds flock(2) on it for as long as it holds the lease,
// and the kernel releases that lock when the writer exits or is killed, so a note nobody holds is a dead run's,
// whatever host wrote it (hosts that write one log share its flocks, as the run locks already require:
// tuner/log_run_lock.h). A pid alone says nothing on another host, and on this one a pid can be reused.
//
// MeasureSession writes the note when it acquires a lease and removes it when it releases one. The note is written
// under its lock, so a reader that takes the lock reads it whole or empty (a writer killed part-way leaves text
// that does not parse, and such a note is skipped). FindDeadRunLeases takes over the notes it lists: it removes each
// while holding its lock, so two runs started together do not both list it, and a run that opens the name next
// creates a new file. Notes written before the lock existed (no "flock" member) are judged as they were then: dead
// when written on this host by a process that no longer runs.
//
// Ownership: a LeaseNote owns its file and its descriptor (the destructor removes the file, then unlocks).
// Thread safety: one owner; the files are per process, so two runs on one log never write the same file.
#pragma once

#include <string>
#include <vector>

#include "common/owned_fd.h"
#include "common/status.h"

namespace tunefleet {

class LeaseNote {
 public:
  // Writes this process's note beside `prefix` (PREFIX.lease.PID) and holds its lock until destroyed.
  // Errors: IOError naming the file.
  static Result<LeaseNote> Write(const std::string& prefix, const std::string& lease_id, const std::string& tracker);
  // The note's file for this process: PREFIX.lease.PID.
  static std::string PathFor(const std::string& prefix);

  LeaseNote(LeaseNote&& other) noexcept;
  LeaseNote& operator=(LeaseNote&& other) noexcept;
  LeaseNote(const LeaseNote&) = delete;
  LeaseNote& operator=(const LeaseNote&) = delete;
  ~LeaseNote();

 private:
  LeaseNote(std::string path, OwnedFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  void Remove();
  std::string path_;
  OwnedFd fd_;
};

struct NotedLease {
  std::string lease_id;
  std::string tracker;
  long pid = 0;
  std::string host;
};

// The notes beside PREFIX of runs that no longer live, taken over: each listed note's file is removed, and releasing
// its lease is the caller's. This process's own note is never opened (closing any descriptor of a file drops the
// process's locks on it where flock is emulated by fcntl locks, as over NFS). Unreadable notes are skipped.
std::vector<NotedLease> FindDeadRunLeases(const std::string& prefix);

}  // namespace tunefleet

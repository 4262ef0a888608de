// LeaseNote: a run's lease, noted in a small file beside its tuning log (LOG.lease.PID: the lease id, the tracker,
// the pid and host), so that a run started again after `kill -9` can release the lease the killed run still holds
// instead of waiting out the tracker's --lease-ttl. The lease id is the capability: only a process that can read the
// log's directory learns it.
//
// MeasureSession writes the note when it acquires a lease (whole or not at all: through LOG.lease.PID.partial,
// common/atomic_file.h) and removes it when it releases one; FindDeadRunLeases lists the notes of runs on this host
// whose process is gone, a .partial one included when it is whole (a run killed between writing and renaming it
// holds that lease too).
// Thread safety: plain functions; the files are per process, so two runs on one log never write the same file.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tunefleet {

struct NotedLease {
  std::string path;  // the note's file
  std::string lease_id;
  std::string tracker;
  long pid = 0;
};

// The note's file for this process: PREFIX.lease.PID.
std::string LeaseNotePath(const std::string& prefix);
// Writes (replaces) this process's note.
Status WriteLeaseNote(const std::string& prefix, const std::string& lease_id, const std::string& tracker);
// Removes this process's note (no error when there is none).
void RemoveLeaseNote(const std::string& prefix);
// Notes beside PREFIX written on this host by processes that no longer run. Unreadable notes are skipped.
std::vector<NotedLease> FindDeadRunLeases(const std::string& prefix);

}  // namespace tunefleet

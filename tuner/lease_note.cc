#include "tuner/lease_note.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/host_name.h"
#include "common/json_parse.h"

namespace tunefleet {
namespace {

namespace fs = std::filesystem;

bool ProcessGone(long pid) { return pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

std::string LeaseNotePath(const std::string& prefix) { return prefix + ".lease." + std::to_string(getpid()); }

Status WriteLeaseNote(const std::string& prefix, const std::string& lease_id, const std::string& tracker) {
  const std::string path = LeaseNotePath(prefix);
  Status written = WriteFileAtomically(path, [&](std::ostream& out) {
    out << nlohmann::json{{"lease_id", lease_id}, {"tracker", tracker}, {"pid", getpid()}, {"host", HostName()}}.dump()
        << "\n";
    return Status::OK();
  });
  if (!written.ok()) return Status::IOError("cannot write the lease note: " + written.message());
  return Status::OK();
}

void RemoveLeaseNote(const std::string& prefix) {
  std::error_code ec;
  fs::remove(LeaseNotePath(prefix), ec);
}

std::vector<NotedLease> FindDeadRunLeases(const std::string& prefix) {
  std::vector<NotedLease> out;
  const fs::path base(prefix);
  const fs::path dir = base.parent_path().empty() ? fs::path(".") : base.parent_path();
  const std::string stem = base.filename().string() + ".lease.";
  const std::string host = HostName();
  std::error_code ec;
  // Stepped with an error code: a range-for's step throws when reading the folder fails part-way.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    if (name.rfind(stem, 0) != 0 || !entry.is_regular_file(ec) || entry.file_size(ec) > 4096) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json j = ParseJson(text.str());
    if (!j.is_object() || !j.value("lease_id", nlohmann::json()).is_string() ||
        !j.value("tracker", nlohmann::json()).is_string() || !j.value("pid", nlohmann::json()).is_number_integer() ||
        !j.value("host", nlohmann::json()).is_string() || j["host"].get<std::string>() != host) {
      continue;
    }
    NotedLease n{entry.path().string(), j["lease_id"].get<std::string>(), j["tracker"].get<std::string>(),
                 j["pid"].get<long>()};
    if (n.pid != getpid() && ProcessGone(n.pid)) out.push_back(std::move(n));
  }
  return out;
}

}  // namespace tunefleet

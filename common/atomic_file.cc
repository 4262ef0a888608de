#include "common/atomic_file.h"

#include <filesystem>
#include <fstream>

namespace tunefleet {

Status WriteFileAtomically(const std::string& path, const std::function<Status(std::ostream&)>& write) {
  const std::string partial = path + ".partial";
  std::ofstream f(partial, std::ios::binary | std::ios::trunc);
  if (!f) return Status::IOError(path + ": cannot open " + partial + " for writing");
  Status written = write(f);
  f.close();
  if (written.ok() && !f) written = Status::IOError(path + ": write failed");
  std::error_code ec;
  if (written.ok()) std::filesystem::rename(partial, path, ec);
  if (written.ok() && ec) written = Status::IOError(path + ": cannot replace it: " + ec.message());
  if (!written.ok()) std::filesystem::remove(partial, ec);
  return written;
}

}  // namespace tunefleet

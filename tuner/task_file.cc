#include "tuner/task_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "common/owned_fd.h"
#include "common/printable.h"
#include "common/standard_input.h"

namespace tunefleet {
namespace {

constexpr std::string_view kSpaces = " \t\r";

// The whitespace-separated fields of a line, its comment cut off.
std::vector<std::string_view> Fields(std::string_view line) {
  line = line.substr(0, line.find('#'));
  std::vector<std::string_view> fields;
  size_t at = line.find_first_not_of(kSpaces);
  while (at != std::string_view::npos) {
    const size_t end = line.find_first_of(kSpaces, at);
    fields.push_back(line.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    at = end == std::string_view::npos ? end : line.find_first_not_of(kSpaces, end);
  }
  return fields;
}

// A count in plain decimal (no sign, no leading 0), 1 to kMaxTaskCount; -1 when it is not one.
int64_t ParseCount(std::string_view text) {
  if (text.empty() || text.size() > 7 || text[0] == '0' || text.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  const int64_t n = std::stoll(std::string(text));
  return n <= kMaxTaskCount ? n : -1;
}

// Why a file could not be opened or read: bad input when the path names nothing readable as a file; otherwise (an
// I/O error, no memory, too many open files) the file is unavailable, which `tune` exits 1 for, as for a log.
Status ReadFailure(const std::string& who, int error) {
  const std::string what = who + ": cannot read it (" + std::strerror(error) + ")";
  const bool bad_input = error == ENOENT || error == ENOTDIR || error == EISDIR || error == EACCES ||
                         error == ENAMETOOLONG || error == ELOOP || error == EBADF;
  return bad_input ? Status::InvalidArgument(what) : Status::Unavailable(what);
}

// The whole of `fd` (a file, or standard input), at most kMaxTaskFileBytes.
Result<std::string> ReadBounded(int fd, const std::string& who) {
  std::string text;
  char chunk[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ReadFailure(who, errno);
    if (n == 0) return text;
    text.append(chunk, static_cast<size_t>(n));
    if (text.size() > kMaxTaskFileBytes) {
      return Status::InvalidArgument(who + ": larger than " + std::to_string(kMaxTaskFileBytes >> 20) +
                                     " MiB: not a task file (one SPEC [COUNT] per line)");
    }
  }
}

}  // namespace

Result<std::vector<ListedTask>> ParseTaskList(std::string_view text, const std::string& name) {
  const std::string who = Printable(name);
  constexpr std::string_view kBom = "\xef\xbb\xbf";  // Windows editors start a UTF-8 file with it
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  std::vector<ListedTask> tasks;
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    ++line_number;
    const std::vector<std::string_view> fields = Fields(line);
    if (fields.empty()) continue;
    const std::string at = who + ":" + std::to_string(line_number) + ": ";
    if (fields.size() > 2) {
      return Status::InvalidArgument(at + "expected SPEC [COUNT], got " + std::to_string(fields.size()) +
                                     " fields (a spec holds no spaces): " + Printable(line));
    }
    Result<Task> task = Task::Parse(fields[0]);
    // The parser quotes the spec whole: a line of megabytes is quoted in part.
    if (!task.ok()) return Status::InvalidArgument(at + Printable(task.status().message(), 400));
    ListedTask listed{std::move(task).value(), 1};
    if (fields.size() == 2) {
      listed.count = ParseCount(fields[1]);
      if (listed.count < 0) {
        return Status::InvalidArgument(at + "the count '" + Printable(fields[1]) +
                                       "' is not a whole number from 1 to " + std::to_string(kMaxTaskCount) +
                                       " in decimal digits");
      }
    }
    tasks.push_back(std::move(listed));
  }
  if (tasks.empty()) {
    return Status::InvalidArgument(who + ": lists no task (one SPEC [COUNT] per line, e.g. gemm:256,256,256 2)");
  }
  return tasks;
}

Result<std::vector<ListedTask>> ReadTaskFile(const std::string& path) {
  if (path == "-") {
    if (StandardInputClosed()) {
      return Status::InvalidArgument("--task-file -: standard input is closed (give the file's path instead)");
    }
    TF_ASSIGN_OR_RETURN(std::string text, ReadBounded(STDIN_FILENO, "standard input"));
    return ParseTaskList(text, "standard input");
  }
  const std::string who = Printable(path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument(who + ": a folder, not a task file");
  }
  const OwnedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ReadFailure(who, errno);
  TF_ASSIGN_OR_RETURN(std::string text, ReadBounded(fd.get(), who));
  return ParseTaskList(text, path);
}

std::string FormatTaskList(const std::vector<ListedTask>& tasks, const std::string& header) {
  std::ostringstream out;
  if (!header.empty()) out << "# " << Printable(header, 400) << "\n";
  for (const ListedTask& t : tasks) out << t.task.ToSpec() << " " << t.count << "\n";
  return out.str();
}

}  // namespace tunefleet

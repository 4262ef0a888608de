#include "tuner/task_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "common/printable.h"

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

Result<std::string> ReadBounded(std::istream& in, const std::string& name) {
  std::string text;
  char chunk[64 * 1024];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxTaskFileBytes) {
      return Status::InvalidArgument(name + ": larger than " + std::to_string(kMaxTaskFileBytes >> 20) +
                                     " MiB: not a task file (one SPEC [COUNT] per line)");
    }
  }
  if (in.bad()) return Status::InvalidArgument(name + ": cannot read it (" + std::strerror(errno) + ")");
  return text;
}

}  // namespace

Result<std::vector<ListedTask>> ParseTaskList(std::string_view text, const std::string& name) {
  const std::string who = Printable(name);
  std::vector<ListedTask> tasks;
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
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
    if (!task.ok()) return Status::InvalidArgument(at + task.status().message());
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
    TF_ASSIGN_OR_RETURN(std::string text, ReadBounded(std::cin, "standard input"));
    return ParseTaskList(text, "standard input");
  }
  const std::string who = Printable(path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument(who + ": a folder, not a task file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument(who + ": cannot read it (" + std::strerror(errno) + ")");
  TF_ASSIGN_OR_RETURN(std::string text, ReadBounded(in, who));
  return ParseTaskList(text, path);
}

std::string FormatTaskList(const std::vector<ListedTask>& tasks, const std::string& header) {
  std::ostringstream out;
  if (!header.empty()) out << "# " << Printable(header, 400) << "\n";
  for (const ListedTask& t : tasks) out << t.task.ToSpec() << " " << t.count << "\n";
  return out.str();
}

}  // namespace tunefleet

// Task files: `tunefleet tune --task-file FILE` reads the tasks to tune from a file, one per line, and
// `tunefleet tasks MODEL --specs` writes a model's tasks in that form. So a model's tasks can be listed, edited (the
// heavy layers kept, some given to another fleet) and tuned without the model.
//
// Format: one task per line, `SPEC [COUNT]`: a task spec as `--task` takes it and, optionally, how many times the
// task occurs (a whole number in decimal, 1 to kMaxTaskCount; default 1), which weights its share of the trials as a
// model layer's count does. `#` starts a comment to the end of the line; blank lines and a line's surrounding spaces
// (and a CR before its LF) are ignored.
// Thread safety: free functions over values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "search-spaces/task.h"

namespace tunefleet {

inline constexpr int64_t kMaxTaskCount = 1'000'000;
inline constexpr size_t kMaxTaskFileBytes = 16u << 20;

struct ListedTask {
  Task task;
  int64_t count = 1;
};

// The tasks of a task file's text, in file order (a task listed twice stays twice: the caller merges). `name` is how
// errors name the file: "NAME:LINE: what is wrong". A text that lists no task is an error.
Result<std::vector<ListedTask>> ParseTaskList(std::string_view text, const std::string& name);

// Reads and parses the file at `path` ("-": standard input). An error is kInvalidArgument for bad input (a path that
// names no file, a bad line) and kUnavailable when the file could not be read for another reason (an I/O error).
Result<std::vector<ListedTask>> ReadTaskFile(const std::string& path);

// The text ParseTaskList reads back: a comment line `# HEADER` (when not empty), then `SPEC COUNT` per task.
std::string FormatTaskList(const std::vector<ListedTask>& tasks, const std::string& header);

}  // namespace tunefleet

#include "tuner/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace tunefleet {

Progress::Progress(uint64_t total_trials, double time_budget, std::FILE* out, std::chrono::milliseconds quiet)
    : total_(total_trials),
      time_budget_(time_budget),
      out_(out),
      tty_(isatty(fileno(out)) != 0),
      quiet_(quiet),
      start_(std::chrono::steady_clock::now()),
      last_line_(start_) {}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double Progress::EtaSeconds() const {
  double by_time = time_budget_ > 0 ? std::max(0.0, time_budget_ - elapsed_seconds()) : -1;
  if (total_ == 0 || done_ == 0) return by_time;
  if (done_ >= total_) return 0;
  double by_trials = elapsed_seconds() / static_cast<double>(done_) * static_cast<double>(total_ - done_);
  return by_time >= 0 ? std::min(by_time, by_trials) : by_trials;
}

std::string FormatDuration(double s) {
  if (s < 0) return "?";
  long t = std::lround(s);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lds", t);
  return buf;
}

std::string FormatGivenDuration(double s) {
  if (s < 0 || s >= 60) return FormatDuration(s);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3gs", s);
  return buf;
}

void Progress::Show(const std::string& task_label, double last_gflops, double best_gflops,
                    const std::string& extra, bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!tty_ && !force && now - last_line_ < quiet_) return;
  if (!tty_) last_line_ = now;
  std::string line = noun_ + " " + std::to_string(done_);
  if (total_ > 0) line += "/" + std::to_string(total_);
  line += " | " + task_label;
  char current[48] = "-";  // no result yet
  if (last_gflops < 0) std::snprintf(current, sizeof current, "failed");
  if (last_gflops >= 0) std::snprintf(current, sizeof current, "%.2f GFLOPS", last_gflops);
  char best[48] = "-";  // no success yet
  if (best_gflops > 0) std::snprintf(best, sizeof best, "%.2f GFLOPS", best_gflops);
  char nums[200];
  std::snprintf(nums, sizeof nums, " | current %s | best %s | elapsed %s | ETA %s", current, best,
                FormatDuration(elapsed_seconds()).c_str(), FormatDuration(EtaSeconds()).c_str());
  line += nums;
  if (!extra.empty()) line += " | " + extra;
  if (tty_) {
    std::fprintf(out_, "\r\033[K%s", line.c_str());
    line_open_ = true;
    if (force) Finish();
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void Progress::Finish() {
  if (line_open_) std::fprintf(out_, "\n");
  line_open_ = false;
  std::fflush(out_);
}

}  // namespace tunefleet

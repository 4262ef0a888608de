// For tests: the default spdlog logger replaced by one that writes into a string, the previous one restored when
// this goes. Read text() once the threads that log have stopped (the string is not guarded while they write).
#pragma once

#include <memory>
#include <sstream>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

namespace tunefleet::testing {

class CapturedSpdlog {
 public:
  CapturedSpdlog() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(
        std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out_)));
  }
  ~CapturedSpdlog() { spdlog::set_default_logger(previous_); }
  CapturedSpdlog(const CapturedSpdlog&) = delete;
  CapturedSpdlog& operator=(const CapturedSpdlog&) = delete;

  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;  // before the logger that writes into it
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace tunefleet::testing

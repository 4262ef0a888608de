// The optional HTTP side port: `/` is a plain HTML table of agents and keys, `/metrics` is Prometheus
// text (agents per key and state, leased agents, waiting acquires, jobs done). Anything else is 404.
// HTTP/1.0-style: one request per connection, then close.
//
// Thread safety: one I/O thread of its own serves requests; Stop() may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "proto/tunefleet.pb.h"

namespace tunefleet::tracker {

class TrackerState;

// Pure renderers, tested without sockets.
std::string RenderStatusPage(const proto::SummaryReply& summary);
std::string RenderMetrics(const proto::SummaryReply& summary, uint64_t jobs_done);

class HttpStatus {
 public:
  // Binds host:port (0 = any free port) and starts serving. `state` must outlive this object.
  static Result<std::unique_ptr<HttpStatus>> Start(const std::string& host, int port, TrackerState* state);
  ~HttpStatus();  // Stop()
  HttpStatus(const HttpStatus&) = delete;
  HttpStatus& operator=(const HttpStatus&) = delete;

  int port() const;
  void Stop();  // idempotent

 private:
  struct Impl;
  explicit HttpStatus(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tunefleet::tracker

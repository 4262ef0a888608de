// The optional HTTP side port: `/` is a plain HTML table of agents and keys, `/metrics` is Prometheus
// text (agents per key and state, leased agents, waiting acquires, jobs done, results by status, agents lost and
// refused, leases expired). Anything else is 404. A query string
// ("/?a=b", "/metrics?x=1") is ignored.
// HTTP/1.0-style: one request per connection, then close. A request's headers end at a blank line ("\r\n\r\n", or
// "\n\n" from a lenient client); an absolute URI ("GET http://host:port/metrics", a proxy's) is taken by its path;
// a request line without a method and a path is 400, headers past 16 KiB are 431.
//
// Robustness: a connection that has not sent its whole request and taken its reply within
// HttpStatusOptions::request_deadline of being accepted is closed, so idle or half-sent connections cannot hold
// file descriptors until shutdown. A failed accept (e.g. EMFILE, "Too many open files") is logged once per run of
// failures and retried after accept_retry_delay; accepting stops only when the server is stopped. Past
// max_connections open at once, a new connection is closed at once (said at most once a minute, with a count).
//
// Thread safety: one I/O thread of its own serves requests; Stop() may be called from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"
#include "proto/tunefleet.pb.h"
#include "tracker/tracker_counters.h"

namespace tunefleet::tracker {

class TrackerState;

// Pure renderers, tested without sockets.
std::string RenderStatusPage(const proto::SummaryReply& summary);
std::string RenderMetrics(const proto::SummaryReply& summary, const TrackerCounters& counters);

struct HttpStatusOptions {
  // From accept to the reply written. Clients (curl, browsers, Prometheus) send their request right after
  // connecting; 10 s is Prometheus's default scrape timeout and leaves room for a few TCP retransmissions
  // (1 + 2 + 4 s), while bounding how long an idle peer holds a file descriptor.
  std::chrono::milliseconds request_deadline{10000};
  // Wait after a failed accept before the next one. The listening socket stays readable while connections
  // are queued, so retrying at once would spin; 250 ms is still a quick recovery.
  std::chrono::milliseconds accept_retry_delay{250};
  // Connections open at once; one more is closed as soon as it is accepted. A status page and a few scrapers need a
  // handful: the cap keeps a flood of this unauthenticated port from taking the descriptors the gRPC side (agents,
  // tuners) needs. (The tracker gives it at most a quarter of its file limit: tracker/server.cc.)
  size_t max_connections = 64;
};

class HttpStatus {
 public:
  // Binds host:port (0 = any free port) and starts serving. `state` must outlive this object.
  static Result<std::unique_ptr<HttpStatus>> Start(const std::string& host, int port, TrackerState* state,
                                                   const HttpStatusOptions& options = {});
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

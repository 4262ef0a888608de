#include "tracker/http_status.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <cctype>
#include <chrono>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "common/html_escape.h"
#include "tracker/host_port.h"
#include "tracker/listen_endpoints.h"
#include "tracker/tracker_state.h"

namespace tunefleet::tracker {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// Prometheus label values escape backslash, quote and newline.
std::string Label(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string RenderStatusPage(const proto::SummaryReply& summary) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tunefleet tracker</title></head><body>\n"
    << "<h1>tunefleet tracker " << HtmlEscape(summary.tracker_version()) << "</h1>\n<h2>Keys</h2>\n"
    << "<table border=\"1\"><tr><th>key</th><th>free</th><th>leased</th><th>waiting</th></tr>\n";
  for (const auto& k : summary.keys()) {
    o << "<tr><td>" << HtmlEscape(k.key()) << "</td><td>" << k.free() << "</td><td>" << k.leased() << "</td><td>"
      << k.waiting() << "</td></tr>\n";
  }
  o << "</table>\n";
  // Each key's queue in serving order, as `tunefleet query` shows it.
  bool queued = false;
  for (const auto& k : summary.keys()) {
    for (int i = 0; i < k.queue_size(); ++i) {
      if (!queued) {
        o << "<h2>Queue</h2>\n<table border=\"1\"><tr><th>key</th><th>place</th><th>waiting client</th>"
          << "<th>priority</th><th>devices</th><th>waited (s)</th></tr>\n";
        queued = true;
      }
      const auto& q = k.queue(i);
      char waited[32];
      std::snprintf(waited, sizeof waited, "%.1f", q.waited_s());
      o << "<tr><td>" << HtmlEscape(k.key()) << "</td><td>" << i + 1 << "</td><td>" << HtmlEscape(q.client())
        << "</td><td>" << q.priority() << "</td><td>" << q.min_count()
        << (q.min_count() < q.count() ? " to " + std::to_string(q.count()) : "") << "</td><td>" << waited
        << "</td></tr>\n";
    }
  }
  if (queued) o << "</table>\n";
  o << "<h2>Agents</h2>\n<table border=\"1\"><tr><th>agent</th><th>key</th><th>device</th><th>state</th>"
    << "<th>lease holder</th><th>jobs done</th><th>last seen (s)</th><th>peer</th></tr>\n";
  for (const auto& a : summary.agents()) {
    char age[32];
    std::snprintf(age, sizeof age, "%.1f", a.last_seen_age());
    o << "<tr><td>" << HtmlEscape(a.agent_id()) << "</td><td>" << HtmlEscape(a.key()) << "</td><td>"
      << HtmlEscape(a.device().name()) << "</td><td>" << HtmlEscape(a.state()) << "</td><td>"
      << HtmlEscape(a.lease_holder()) << "</td><td>" << a.jobs_done() << "</td><td>" << age << "</td><td>"
      << HtmlEscape(a.peer()) << "</td></tr>\n";
  }
  o << "</table>\n</body></html>\n";
  return o.str();
}

std::string RenderMetrics(const proto::SummaryReply& summary, const TrackerCounters& counters) {
  std::ostringstream o;
  // (key, state) -> agents. Every state of every key is written, 0 included: a series that vanished while no agent
  // was in its state left a gap in a graph where there were none. So is a key whose agents are all gone (an alert on
  // "no agent of the key" must see 0, not nothing).
  std::map<std::pair<std::string, std::string>, int> by_state;
  std::map<std::string, std::pair<int, int>> leased_waiting;  // key -> (leased agents, waiting acquires)
  for (const std::string& key : counters.keys_seen) leased_waiting[key] = {0, 0};
  for (const auto& k : summary.keys()) {
    leased_waiting[k.key()] = {static_cast<int>(k.leased()), static_cast<int>(k.waiting())};
  }
  for (const auto& [key, unused] : leased_waiting) {
    for (const char* state : {"free", "leased", "busy"}) by_state[{key, state}] = 0;
  }
  for (const auto& a : summary.agents()) by_state[{a.key(), a.state()}]++;
  o << "# HELP tunefleet_agents Registered agents by key and state.\n# TYPE tunefleet_agents gauge\n";
  for (const auto& [ks, n] : by_state) {
    o << "tunefleet_agents{key=\"" << Label(ks.first) << "\",state=\"" << Label(ks.second) << "\"} " << n << "\n";
  }
  o << "# HELP tunefleet_leased_agents Agents held by a lease (idle or running a job), by key.\n"
       "# TYPE tunefleet_leased_agents gauge\n";
  for (const auto& [key, n] : leased_waiting) {
    o << "tunefleet_leased_agents{key=\"" << Label(key) << "\"} " << n.first << "\n";
  }
  o << "# HELP tunefleet_waiting_acquires Acquire requests queued, by key.\n# TYPE tunefleet_waiting_acquires gauge\n";
  for (const auto& [key, n] : leased_waiting) {
    o << "tunefleet_waiting_acquires{key=\"" << Label(key) << "\"} " << n.second << "\n";
  }
  // Jobs an agent measured: a result whose tuner had gone (stopped mid-batch) is counted, though it reaches no log.
  o << "# HELP tunefleet_agent_jobs_done_total Jobs measured per agent (results received, also those whose tuner had "
       "gone).\n# TYPE tunefleet_agent_jobs_done_total counter\n";
  for (const auto& a : summary.agents()) {
    o << "tunefleet_agent_jobs_done_total{agent=\"" << Label(a.agent_id()) << "\",key=\"" << Label(a.key()) << "\"} "
      << a.jobs_done() << "\n";
  }
  o << "# HELP tunefleet_jobs_done_total Jobs whose result came back since the tracker started (measured or failed, "
       "also those whose tuner had gone; by status: tunefleet_job_results_total).\n"
    << "# TYPE tunefleet_jobs_done_total counter\ntunefleet_jobs_done_total " << counters.jobs_done << "\n";
  // Every status, 0 included: a fleet whose kernels all fail must not look like a healthy one.
  o << "# HELP tunefleet_job_results_total Results since the tracker started, by status (ok, or how the job failed)."
       "\n# TYPE tunefleet_job_results_total counter\n";
  std::map<int, uint64_t> by_status = counters.results_by_status;
  for (int status = proto::MeasureStatus_MIN; status <= proto::MeasureStatus_MAX; ++status) {
    by_status.try_emplace(status, 0);
  }
  for (const auto& [status, n] : by_status) {
    std::string name = proto::MeasureStatus_IsValid(status)
                           ? proto::MeasureStatus_Name(static_cast<proto::MeasureStatus>(status))
                           : "status_" + std::to_string(status);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    o << "tunefleet_job_results_total{status=\"" << Label(name) << "\"} " << n << "\n";
  }
  o << "# HELP tunefleet_jobs_cancelled_total Running jobs the agents were told to stop since the tracker started "
       "(their tuner stopped or its lease ended); not in tunefleet_jobs_done_total unless measured before the stop.\n"
       "# TYPE tunefleet_jobs_cancelled_total counter\ntunefleet_jobs_cancelled_total " << counters.jobs_cancelled
    << "\n";
  o << "# HELP tunefleet_agents_lost_total Agents dropped since the tracker started (silent, past a job's deadline, "
       "a broken connection; not those that left).\n# TYPE tunefleet_agents_lost_total counter\n"
    << "tunefleet_agents_lost_total " << counters.agents_lost << "\n";
  o << "# HELP tunefleet_agents_refused_total Agent sessions refused over --max-agents since the tracker started.\n"
       "# TYPE tunefleet_agents_refused_total counter\ntunefleet_agents_refused_total " << counters.agents_refused
    << "\n";
  o << "# HELP tunefleet_leases_expired_total Leases not renewed within --lease-ttl since the tracker started.\n"
       "# TYPE tunefleet_leases_expired_total counter\ntunefleet_leases_expired_total " << counters.leases_expired
    << "\n";
  return o.str();
}

struct HttpStatus::Impl {
  TrackerState* state;
  HttpStatusOptions options;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  std::thread thread;
  bool stopped = false;               // touched only by the owner's thread
  std::atomic<bool> stopping{false};  // set by Stop() before the I/O thread ends
  uint64_t failed_accepts = 0;        // in the current run of accept errors; I/O thread only
  size_t open_connections = 0;        // I/O thread only
  uint64_t turned_away = 0;           // connections closed at once for max_connections, since the last warning
  std::optional<std::chrono::steady_clock::time_point> turned_away_said;  // when that warning was last said

  void Accept() {
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (stopping || ec == asio::error::operation_aborted) return;  // shutting down
      if (ec) {
        RetryAccept(ec);
        return;
      }
      if (failed_accepts > 0) {
        spdlog::info("HTTP status port: accepting again after {} failed accept(s)", failed_accepts);
        failed_accepts = 0;
      }
      if (open_connections >= options.max_connections) {
        // Said at most once a minute, with the count since: at the cap each freed slot ended a "run" of closes, and
        // a flood of this unauthenticated port wrote two lines per connection.
        ++turned_away;
        const auto now = std::chrono::steady_clock::now();
        if (!turned_away_said || now - *turned_away_said >= std::chrono::minutes(1)) {
          spdlog::warn("HTTP status port: {} connection(s) closed as they came{}: {} open, the most it serves at once",
                       turned_away, turned_away_said ? " in the last minute" : "", open_connections);
          turned_away = 0;
          turned_away_said = now;
        }
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        std::make_shared<Connection>(std::move(socket), this)->Start();
      }
      Accept();
    });
  }

  // E.g. EMFILE/ENFILE while the process is out of file descriptors: keep the port alive, try again later.
  void RetryAccept(const boost::system::error_code& ec) {
    if (failed_accepts++ == 0) {
      spdlog::warn("HTTP status port: accept failed: {}; retrying every {} ms", ec.message(),
                   options.accept_retry_delay.count());
    }
    accept_retry.expires_after(options.accept_retry_delay);
    accept_retry.async_wait([this](boost::system::error_code ec) {
      if (ec || stopping) return;
      Accept();
    });
  }

  // One request, one reply, then close. The whole exchange has options.request_deadline from accept; then the
  // socket is closed, which fails the pending read or write.
  struct Connection : std::enable_shared_from_this<Connection> {
    Connection(tcp::socket s, Impl* impl) : socket(std::move(s)), deadline(socket.get_executor()), impl(impl) {
      ++impl->open_connections;
    }
    ~Connection() { --impl->open_connections; }

    void Start() {
      deadline.expires_after(impl->options.request_deadline);
      deadline.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (ec) return;  // cancelled: the exchange is over
        boost::system::error_code ignored;
        self->socket.close(ignored);
      });
      auto self = shared_from_this();
      asio::async_read_until(socket, buf, EndOfHeaders, [self](boost::system::error_code ec, size_t) {
        if (ec == asio::error::not_found) {  // the buffer is full and no end of the headers in it
          self->Reply(Impl::Plain("431 Request Header Fields Too Large", "request headers over 16 KiB\n"),
                      /*drain=*/true);
          return;
        }
        if (ec) {
          self->deadline.cancel();  // releases the socket now, not at the deadline
          return;
        }
        std::istream in(&self->buf);
        std::string method, target;
        in >> method >> target;
        self->Reply(self->impl->Respond(method, target));
      });
    }

    // Writes `text` and ends the exchange. `drain`: the request was not read whole; what is left of it is read and
    // dropped until the peer closes or the deadline passes, since closing over unread bytes resets the connection,
    // and the peer may lose the reply with it.
    void Reply(std::string text, bool drain = false) {
      reply = std::move(text);
      auto self = shared_from_this();
      asio::async_write(socket, asio::buffer(reply), [self, drain](boost::system::error_code ec, size_t) {
        boost::system::error_code ignored;
        if (drain && !ec) {
          self->socket.shutdown(tcp::socket::shutdown_send, ignored);
          self->Drain();
          return;
        }
        self->deadline.cancel();
        self->socket.shutdown(tcp::socket::shutdown_both, ignored);
      });
    }

    void Drain() {
      auto self = shared_from_this();
      socket.async_read_some(asio::buffer(scratch), [self](boost::system::error_code ec, size_t) {
        if (ec) {  // the peer closed (or the deadline closed the socket)
          self->deadline.cancel();
          return;
        }
        self->Drain();
      });
    }

    // The end of a request's headers: a blank line, "\r\n\r\n" or, from a lenient client, "\n\n" (which got no
    // answer but the deadline's close). Without one, the next call (after more bytes came) starts 3 bytes before
    // this one's end, so that an end split between two reads is found.
    static std::pair<asio::buffers_iterator<asio::streambuf::const_buffers_type>, bool> EndOfHeaders(
        asio::buffers_iterator<asio::streambuf::const_buffers_type> begin,
        asio::buffers_iterator<asio::streambuf::const_buffers_type> end) {
      char last = 0, before_last = 0;
      for (auto it = begin; it != end; ++it) {
        const char c = *it;
        if (c == '\n' && (last == '\n' || (last == '\r' && before_last == '\n'))) return {std::next(it), true};
        before_last = last;
        last = c;
      }
      return {end - std::min<std::ptrdiff_t>(3, end - begin), false};
    }

    tcp::socket socket;
    asio::steady_timer deadline;
    asio::streambuf buf{16 * 1024};  // a request line + headers, bounded
    std::string reply;
    std::array<char, 4096> scratch;  // Drain's
    Impl* impl;
  };

  // A reply of plain text with `status` (e.g. "400 Bad Request").
  static std::string Plain(const std::string& status, const std::string& body) {
    return "HTTP/1.0 " + status + "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
  }

  std::string Respond(const std::string& method, const std::string& request_target) {
    // A request line without a method and a target (an empty request, a TLS client's first bytes) is no request.
    std::string target = request_target;
    // An absolute URI ("GET http://host:9191/metrics", as a proxy sends it; HTTP/1.1 servers must take it).
    for (const char* scheme : {"http://", "https://"}) {
      if (target.rfind(scheme, 0) == 0) {
        const size_t path = target.find('/', std::string(scheme).size());
        target = path == std::string::npos ? "/" : target.substr(path);
      }
    }
    if (method.empty() || target.empty() || target[0] != '/') return Plain("400 Bad Request", "not an HTTP request\n");
    std::string status = "200 OK", type = "text/html; charset=utf-8", body, allow;
    // A query string (a browser's or a scraper's "/?refresh=1") does not change the page: routed by the path.
    const std::string path = target.substr(0, target.find('?'));
    // HEAD (a monitor's or curl -I's check) gets GET's status and headers without the body, as HTTP asks.
    const bool head = method == "HEAD";
    if (method != "GET" && !head) {
      status = "405 Method Not Allowed";
      type = "text/plain";
      body = "only GET and HEAD\n";
      allow = "Allow: GET, HEAD\r\n";
    } else if (path == "/" || path == "/index.html") {
      body = RenderStatusPage(state->Summary());
    } else if (path == "/metrics") {
      type = "text/plain; version=0.0.4";
      body = RenderMetrics(state->Summary(), state->counters());
    } else {
      status = "404 Not Found";
      type = "text/plain";
      body = "not found\n";
    }
    return "HTTP/1.0 " + status + "\r\n" + allow + "Content-Type: " + type +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
           (head ? std::string() : body);
  }
};

HttpStatus::HttpStatus(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<HttpStatus>> HttpStatus::Start(const std::string& host, int port, TrackerState* state,
                                                      const HttpStatusOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->state = state;
  impl->options = options;
  TF_ASSIGN_OR_RETURN(const std::vector<ListenEndpoint> endpoints, ListenEndpoints(host, port));
  boost::system::error_code ec;
  for (const auto& [endpoint, dual_stack] : endpoints) {  // the first that can be had
    if (impl->acceptor.is_open()) impl->acceptor.close(ec);
    ec.clear();
    impl->acceptor.open(endpoint.protocol(), ec);
    if (!ec) impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec && dual_stack) impl->acceptor.set_option(asio::ip::v6_only(false), ec);
    if (!ec) impl->acceptor.bind(endpoint, ec);
    if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) break;
  }
  if (ec) {
    return Status::Unavailable("cannot listen for HTTP on " + HostPort(host, port) + ": " + ec.message());
  }
  impl->Accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<HttpStatus>(new HttpStatus(std::move(impl)));
}

HttpStatus::~HttpStatus() { Stop(); }

int HttpStatus::port() const { return impl_->acceptor.local_endpoint().port(); }

void HttpStatus::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->stopping = true;
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace tunefleet::tracker

#include "tracker/http_status.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tracker/server.h"
#include "tracker/test_agent.h"
#include "tracker/tracker_state.h"

namespace tunefleet::tracker {
namespace {

proto::SummaryReply TwoAgents() {
  proto::SummaryReply s;
  s.set_tracker_version("0.1.0");
  auto* a = s.add_agents();
  a->set_agent_id("agent-1");
  a->set_key("phone");
  a->mutable_device()->set_name("Adreno <640>");
  a->set_state("busy");
  a->set_jobs_done(12);
  auto* b = s.add_agents();
  b->set_agent_id("agent-2");
  b->set_key("phone");
  b->set_state("free");
  auto* k = s.add_keys();
  k->set_key("phone");
  k->set_free(1);
  k->set_leased(1);
  k->set_waiting(3);
  return s;
}

TEST(HttpStatusTest, GivenASummary_TheMetricsShouldCountAgentsPerKeyAndStateAndTheQueue) {
  TrackerCounters counters;
  counters.jobs_done = 40;
  const std::string m = RenderMetrics(TwoAgents(), counters);
  EXPECT_NE(m.find("tunefleet_agents{key=\"phone\",state=\"busy\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tunefleet_agents{key=\"phone\",state=\"free\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("tunefleet_leased_agents{key=\"phone\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("tunefleet_waiting_acquires{key=\"phone\"} 3\n"), std::string::npos);
  EXPECT_NE(m.find("tunefleet_agent_jobs_done_total{agent=\"agent-1\",key=\"phone\"} 12\n"), std::string::npos);
  EXPECT_NE(m.find("tunefleet_jobs_done_total 40\n"), std::string::npos);
  // No agent of 'phone' is leased (one is busy, one free): that series is 0, not missing.
  EXPECT_NE(m.find("tunefleet_agents{key=\"phone\",state=\"leased\"} 0\n"), std::string::npos) << m;
}

// Failures, losses and expiries have series of their own, every status written (0 included): jobs_done counts failed
// results too, so a fleet whose kernels all failed looked like a healthy one. A key whose agents are all gone stays,
// at 0, so that an alert on "no agent of the key" fires.
TEST(HttpStatusTest, GivenCountersAndAKeyWithoutAgents_TheMetricsShouldSayResultsByStatusLossesAndTheEmptyKey) {
  TrackerCounters counters;
  counters.jobs_done = 10;
  counters.results_by_status = {{0, 2}, {7, 8}};
  counters.agents_lost = 3;
  counters.agents_refused = 4;
  counters.leases_expired = 5;
  counters.jobs_cancelled = 6;
  counters.keys_seen = {"phone", "gone"};
  const std::string m = RenderMetrics(TwoAgents(), counters);
  EXPECT_NE(m.find("tunefleet_job_results_total{status=\"ok\"} 2\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tunefleet_job_results_total{status=\"run_timeout\"} 8\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tunefleet_job_results_total{status=\"wrong_answer\"} 0\n"), std::string::npos) << m;
  EXPECT_NE(m.find("# TYPE tunefleet_job_results_total counter\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tunefleet_agents_lost_total 3\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tunefleet_agents_refused_total 4\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tunefleet_leases_expired_total 5\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tunefleet_jobs_cancelled_total 6\n"), std::string::npos) << m;
  for (const char* state : {"free", "leased", "busy"}) {
    EXPECT_NE(m.find("tunefleet_agents{key=\"gone\",state=\"" + std::string(state) + "\"} 0\n"), std::string::npos)
        << m;
  }
  EXPECT_NE(m.find("tunefleet_leased_agents{key=\"gone\"} 0\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tunefleet_waiting_acquires{key=\"gone\"} 0\n"), std::string::npos) << m;
  EXPECT_NE(m.find("tunefleet_waiting_acquires{key=\"phone\"} 3\n"), std::string::npos) << m;
}

TEST(HttpStatusTest, GivenADeviceNameWithMarkup_ThePageShouldEscapeIt) {
  const std::string page = RenderStatusPage(TwoAgents());
  EXPECT_NE(page.find("Adreno &lt;640&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<640>"), std::string::npos);
  EXPECT_NE(page.find("<td>agent-2</td>"), std::string::npos);
}

TEST(HttpStatusTest, GivenWaitingRequests_ThePageShouldListTheQueueEscaped) {
  proto::SummaryReply s = TwoAgents();
  EXPECT_EQ(RenderStatusPage(s).find("<h2>Queue</h2>"), std::string::npos);
  auto* q = s.mutable_keys(0)->add_queue();
  q->set_client("<b>eve</b>");
  q->set_count(3);
  q->set_min_count(2);
  q->set_waited_s(4.25);
  const std::string page = RenderStatusPage(s);
  EXPECT_NE(page.find("<h2>Queue</h2>"), std::string::npos) << page;
  EXPECT_NE(page.find("<tr><td>phone</td><td>1</td><td>&lt;b&gt;eve&lt;/b&gt;</td><td>0</td><td>2 to 3</td>"
                      "<td>4.2</td></tr>"),
            std::string::npos)
      << page;
}

std::string Request(int port, const std::string& method, const std::string& path) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket sock(io);
  sock.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  const std::string req = method + " " + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
  boost::asio::write(sock, boost::asio::buffer(req));
  std::string out;
  boost::system::error_code ec;
  boost::asio::read(sock, boost::asio::dynamic_buffer(out), ec);  // until the server closes
  return out;
}

std::string Get(int port, const std::string& path) { return Request(port, "GET", path); }

// A tracker on loopback with its gRPC and status ports on any free port.
ServerOptions LoopbackWithStatusPage() {
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.http_port = 0;
  return o;
}

TEST(HttpStatusTest, GivenARunningTrackerWithHttpPort_WeShouldServeThePageAndMetrics) {
  auto server = TrackerServer::Start(LoopbackWithStatusPage());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  TestAgent agent("127.0.0.1:" + std::to_string((*server)->port()), "pocl", "", TestAgent::Mode::kAnswer);
  ASSERT_FALSE(agent.WaitRegistered().empty());
  const int http = (*server)->http_port();
  ASSERT_GT(http, 0);
  const std::string page = Get(http, "/");
  EXPECT_EQ(page.rfind("HTTP/1.0 200 OK", 0), 0u) << page;
  EXPECT_NE(page.find("test-device-pocl"), std::string::npos);
  const std::string metrics = Get(http, "/metrics");
  EXPECT_NE(metrics.find("tunefleet_agents{key=\"pocl\",state=\"free\"} 1"), std::string::npos) << metrics;
  EXPECT_EQ(Get(http, "/nope").rfind("HTTP/1.0 404", 0), 0u);
  EXPECT_EQ(Get(http, "/nope?a=b").rfind("HTTP/1.0 404", 0), 0u);
}

TEST(HttpStatusTest, GivenAQueryString_WeShouldServeThePageOfItsPath) {
  auto server = TrackerServer::Start(LoopbackWithStatusPage());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int http = (*server)->http_port();
  ASSERT_GT(http, 0);
  const std::string page = Get(http, "/?a=b");
  EXPECT_EQ(page.rfind("HTTP/1.0 200 OK", 0), 0u) << page;
  EXPECT_NE(page.find("<table"), std::string::npos) << page;
  const std::string metrics = Get(http, "/metrics?x=1&y");
  EXPECT_EQ(metrics.rfind("HTTP/1.0 200 OK", 0), 0u) << metrics;
  EXPECT_NE(metrics.find("tunefleet_jobs_done_total 0"), std::string::npos) << metrics;
}

std::string HeaderBlock(const std::string& reply) { return reply.substr(0, reply.find("\r\n\r\n") + 4); }

// `curl -I` and uptime monitors ask with HEAD: they got 405 for a page that GET serves.
TEST(HttpStatusTest, GivenHead_WeShouldAnswerGetsHeadersWithoutTheBody) {
  auto server = TrackerServer::Start(LoopbackWithStatusPage());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int http = (*server)->http_port();
  ASSERT_GT(http, 0);
  for (const char* path : {"/", "/metrics", "/nope"}) {
    const std::string got = Get(http, path);
    const std::string head = Request(http, "HEAD", path);
    EXPECT_EQ(head, HeaderBlock(got)) << path;  // the same status and Content-Length, nothing after the headers
    EXPECT_GT(got.size(), head.size()) << path;
  }
  const std::string post = Request(http, "POST", "/");
  EXPECT_EQ(post.rfind("HTTP/1.0 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n", 0), 0u) << post;
}

// `--host localhost`: gRPC takes a name, and so must the status port (it refused to start, "bad address").
TEST(HttpStatusTest, GivenAHostName_WeShouldListenWhereItResolvesTo) {
  ServerOptions o = LoopbackWithStatusPage();
  o.host = "localhost";
  auto server = TrackerServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int http = (*server)->http_port();
  ASSERT_GT(http, 0);
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket sock(io);
  boost::asio::ip::tcp::resolver resolver(io);
  boost::asio::connect(sock, resolver.resolve("localhost", std::to_string(http)));
  boost::asio::write(sock, boost::asio::buffer(std::string("GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")));
  std::string reply;
  boost::system::error_code ec;
  boost::asio::read(sock, boost::asio::dynamic_buffer(reply), ec);  // until the server closes
  EXPECT_EQ(reply.rfind("HTTP/1.0 200 OK", 0), 0u) << reply;
}

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Plain POSIX sockets below: they allocate no file descriptors beyond the socket itself (the RLIMIT_NOFILE test
// needs that) and can wait with a timeout, so a server that never answers fails the test instead of hanging it.

int NewSocket() { return socket(AF_INET, SOCK_STREAM, 0); }

bool ConnectTo(int fd, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

bool SendAll(int fd, const std::string& data) {
  for (size_t sent = 0; sent < data.size();) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// What the peer sent until it closed the connection, or nullopt when it is still open after `timeout`.
std::optional<std::string> ReadUntilClosed(int fd, std::chrono::milliseconds timeout) {
  const auto end = Clock::now() + timeout;
  std::string out;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    if (left <= 0ms) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    char chunk[4096];
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return out;
    if (n < 0) return std::nullopt;
    out.append(chunk, static_cast<size_t>(n));
  }
}

// GET with a time limit; "" when the server does not answer (and close) within it.
std::string GetWithin(int port, const std::string& path, std::chrono::milliseconds timeout) {
  const int fd = NewSocket();
  if (fd < 0) return "";
  std::optional<std::string> reply;
  if (ConnectTo(fd, port) && SendAll(fd, "GET " + path + " HTTP/1.0\r\nHost: x\r\n\r\n")) {
    reply = ReadUntilClosed(fd, timeout);
  }
  close(fd);
  return reply.value_or("");
}

TEST(HttpStatusTest, GivenAConnectionThatSendsNoWholeRequest_WeShouldCloseItAtTheRequestDeadline) {
  TrackerState state{StateOptions{}};
  HttpStatusOptions options;
  options.request_deadline = 500ms;
  auto http = HttpStatus::Start("127.0.0.1", 0, &state, options);
  ASSERT_TRUE(http.ok()) << http.status().ToString();
  const int port = (*http)->port();

  const auto start = Clock::now();
  const int silent = NewSocket(), half = NewSocket(), slow = NewSocket();
  ASSERT_TRUE(ConnectTo(silent, port) && ConnectTo(half, port) && ConnectTo(slow, port));
  ASSERT_TRUE(SendAll(half, "GET /metr"));
  // A request that arrives in pieces, but within the deadline, is still answered.
  ASSERT_TRUE(SendAll(slow, "GET /metrics HTTP/1.0\r\n"));
  std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(SendAll(slow, "Host: x\r\n\r\n"));

  const auto slow_reply = ReadUntilClosed(slow, 5s);
  ASSERT_TRUE(slow_reply.has_value());
  EXPECT_EQ(slow_reply->rfind("HTTP/1.0 200 OK", 0), 0u) << *slow_reply;
  const auto silent_reply = ReadUntilClosed(silent, 5s);
  const auto half_reply = ReadUntilClosed(half, 5s);
  const auto elapsed = Clock::now() - start;
  ASSERT_TRUE(silent_reply.has_value()) << "a connection that sent nothing is still open after 5 s";
  ASSERT_TRUE(half_reply.has_value()) << "a connection that sent half a request line is still open after 5 s";
  EXPECT_EQ(*silent_reply, "");
  EXPECT_EQ(*half_reply, "");
  EXPECT_GE(elapsed, options.request_deadline);  // not before the deadline
  close(silent);
  close(half);
  close(slow);

  EXPECT_EQ(GetWithin(port, "/metrics", 5s).rfind("HTTP/1.0 200 OK", 0), 0u);
}

// What GetWithin sends, but the whole request given: the reply, "" when none came (and the connection closed) in time.
std::string Exchange(int port, const std::string& request) {
  const int fd = NewSocket();
  if (fd < 0) return "";
  std::optional<std::string> reply;
  if (ConnectTo(fd, port) && SendAll(fd, request)) reply = ReadUntilClosed(fd, 5s);
  close(fd);
  return reply.value_or("");
}

// Requests of lenient clients and proxies are taken; what is no request gets 400, headers past the buffer 431 (they
// got no reply but the deadline's close, a 404, a 405, or a reset).
TEST(HttpStatusTest, GivenBareNewlinesAnAbsoluteUriOrNoRequest_TheReplyShouldSayWhatItIs) {
  TrackerState state{StateOptions{}};
  auto http = HttpStatus::Start("127.0.0.1", 0, &state);
  ASSERT_TRUE(http.ok()) << http.status().ToString();
  const int port = (*http)->port();
  EXPECT_EQ(Exchange(port, "GET /metrics HTTP/1.0\n\n").rfind("HTTP/1.0 200 OK", 0), 0u);
  const std::string absolute =
      Exchange(port, "GET http://127.0.0.1:" + std::to_string(port) + "/metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(absolute.rfind("HTTP/1.0 200 OK", 0), 0u) << absolute;
  EXPECT_NE(absolute.find("tunefleet_jobs_done_total"), std::string::npos) << absolute;
  EXPECT_EQ(Exchange(port, "\r\n\r\n").rfind("HTTP/1.0 400 Bad Request", 0), 0u);
  // The blank line split between two reads is still the end of the headers.
  for (const std::string first : {"GET /metrics HTTP/1.0\r\n\r", "GET /metrics HTTP/1.0\n"}) {
    const int fd = NewSocket();
    ASSERT_TRUE(ConnectTo(fd, port));
    ASSERT_TRUE(SendAll(fd, first));
    std::this_thread::sleep_for(100ms);
    ASSERT_TRUE(SendAll(fd, "\n"));
    const auto reply = ReadUntilClosed(fd, 5s);
    close(fd);
    ASSERT_TRUE(reply.has_value()) << "no reply within 5 s";
    EXPECT_EQ(reply->rfind("HTTP/1.0 200 OK", 0), 0u) << *reply;
  }
  EXPECT_EQ(Exchange(port, "GET nowhere HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 400 Bad Request", 0), 0u);
  const std::string big = Exchange(port, "GET / HTTP/1.0\r\nX-Big: " + std::string(20000, 'x') + "\r\n\r\n");
  EXPECT_EQ(big.rfind("HTTP/1.0 431 Request Header Fields Too Large", 0), 0u) << big.substr(0, 100);
}

// Lowers the soft RLIMIT_NOFILE of this process; restores it when destroyed.
class FdLimit {
 public:
  FdLimit() { getrlimit(RLIMIT_NOFILE, &saved_); }
  ~FdLimit() { Restore(); }
  bool Lower(rlim_t soft) {
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    return setrlimit(RLIMIT_NOFILE, &lowered) == 0;
  }
  void Restore() { setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  rlimit saved_{};
};

// Keeps the text of every message logged, unformatted: the test reads them while no file descriptor can be created,
// and formatting there (a virtual call that UBSan checks, and its check needs a pipe) would fail for want of one.
class MessageSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::string> messages() {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    messages_.emplace_back(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}

 private:
  std::vector<std::string> messages_;  // guarded by base_sink's mutex_
};

// Routes the default logger into a MessageSink for the test's lifetime.
class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<MessageSink>()), saved_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink_));
  }
  ~CapturedLog() { spdlog::set_default_logger(saved_); }
  int Count(const std::string& needle) const {
    int n = 0;
    for (const auto& line : sink_->messages()) n += line.find(needle) != std::string::npos;
    return n;
  }
  std::string All() const {
    std::string out;
    for (const auto& line : sink_->messages()) out += line + "\n";
    return out;
  }

 private:
  std::shared_ptr<MessageSink> sink_;
  std::shared_ptr<spdlog::logger> saved_;
};

TEST(HttpStatusTest, GivenAcceptsFailingForWantOfFileDescriptors_WeShouldLogOnceAndServeAgainAfterwards) {
  CapturedLog log;
  TrackerState state{StateOptions{}};
  HttpStatusOptions options;
  options.accept_retry_delay = 50ms;
  auto http = HttpStatus::Start("127.0.0.1", 0, &state, options);
  ASSERT_TRUE(http.ok()) << http.status().ToString();
  const int port = (*http)->port();

  std::vector<int> clients;
  for (int i = 0; i < 20; ++i) {
    clients.push_back(NewSocket());
    ASSERT_GE(clients.back(), 0);
  }
  {
    // The lowest free descriptor becomes the limit: from then on no descriptor can be created in this process,
    // so the server's accept() fails with EMFILE while the clients' connections wait in the listen backlog.
    const int probe = NewSocket();
    ASSERT_GE(probe, 0);
    close(probe);
    FdLimit limit;
    ASSERT_TRUE(limit.Lower(static_cast<rlim_t>(probe)));
    const int extra = NewSocket(), extra_errno = errno;
    ASSERT_LT(extra, 0);
    ASSERT_EQ(extra_errno, EMFILE);
    for (int fd : clients) ASSERT_TRUE(ConnectTo(fd, port));
    const auto end = Clock::now() + 5s;
    while (log.Count("accept failed") == 0 && Clock::now() < end) std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(300ms);  // several more failed retries
    for (int fd : clients) close(fd);
  }  // limit restored

  const std::string metrics = GetWithin(port, "/metrics", 5s);
  EXPECT_EQ(metrics.rfind("HTTP/1.0 200 OK", 0), 0u) << "no answer after accept errors: " << metrics;
  EXPECT_NE(metrics.find("tunefleet_jobs_done_total 0"), std::string::npos);
  EXPECT_EQ(log.Count("accept failed: Too many open files"), 1) << log.All();  // once, not once per retry
  EXPECT_EQ(log.Count("accepting again"), 1) << log.All();
}

}  // namespace
// Past max_connections open at once, a new connection is closed as soon as it is accepted, without a reply; once
// fewer are open, requests are answered again. A flood of this unauthenticated port had no bound but the process's
// descriptors, which the gRPC side needs.
TEST(HttpStatusTest, GivenMoreConnectionsThanItServesAtOnce_NewOnesShouldBeClosedUntilFewerAreOpen) {
  CapturedLog log;
  TrackerState state{StateOptions{}};
  HttpStatusOptions options;
  options.max_connections = 3;
  auto http = HttpStatus::Start("127.0.0.1", 0, &state, options);
  ASSERT_TRUE(http.ok()) << http.status().ToString();
  const int port = (*http)->port();

  std::vector<int> idle;
  for (int i = 0; i < 3; ++i) {
    idle.push_back(NewSocket());
    ASSERT_TRUE(ConnectTo(idle.back(), port));
  }
  std::this_thread::sleep_for(200ms);  // accepted: the three are open
  const int extra = NewSocket();
  ASSERT_TRUE(ConnectTo(extra, port));
  (void)SendAll(extra, "GET /metrics HTTP/1.0\r\n\r\n");
  const auto turned_away = ReadUntilClosed(extra, 5s);
  ASSERT_TRUE(turned_away.has_value()) << "the fourth connection is still open after 5 s";
  EXPECT_EQ(*turned_away, "");
  close(extra);

  // More closes, with a slot freed and taken again between them: still the one warning of the minute (each freed
  // slot had ended a "run" of closes, two lines a connection under a flood).
  close(idle.back());
  std::this_thread::sleep_for(200ms);  // the server sees the close: two open
  idle.back() = NewSocket();
  ASSERT_TRUE(ConnectTo(idle.back(), port));
  std::this_thread::sleep_for(200ms);
  for (int i = 0; i < 5; ++i) {
    const int more = NewSocket();
    ASSERT_TRUE(ConnectTo(more, port));
    EXPECT_TRUE(ReadUntilClosed(more, 5s).has_value());
    close(more);
  }
  EXPECT_EQ(log.Count("connection(s) closed as they came"), 1) << log.All();

  for (int fd : idle) close(fd);
  std::string reply;
  for (int i = 0; i < 50 && reply.rfind("HTTP/1.0 200 OK", 0) != 0; ++i) {  // the server sees the closes
    std::this_thread::sleep_for(50ms);
    reply = GetWithin(port, "/metrics", 5s);
  }
  EXPECT_EQ(reply.rfind("HTTP/1.0 200 OK", 0), 0u) << reply;
}

}  // namespace tunefleet::tracker

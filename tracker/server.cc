#include "tracker/server.h"

#include <grpc/grpc.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/resource.h>
#include <spdlog/spdlog.h>

#include <boost/asio.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>

#include "common/grpc_keepalive.h"
#include "common/pem_check.h"
#include "common/printable.h"
#include "tracker/auth.h"
#include "tracker/host_port.h"
#include "tracker/http_status.h"
#include "tracker/tracker_service.h"

namespace tunefleet::tracker {
namespace {

Result<std::string> ReadFile(const std::string& path, const char* what) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // The system's reason: a key only root may read is "Permission denied". A file of the command line that is not
    // there or not for this user is its configuration, exit 2, which the systemd unit does not restart in a loop (it
    // restarted on 1); a failure of the system (no descriptor left, an I/O error) stays one at run time.
    const int err = errno;
    const std::string text = std::string("cannot read ") + what + " '" + path + "'" +
                             (err != 0 ? std::string(": ") + std::strerror(err) : std::string());
    return IsConfigurationErrno(err) ? Status::InvalidArgument(text) : Status::IOError(text);
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Binds host:port once and lets go, so that a port in use or an address that is not this machine's is said in one
// line naming the cause, before gRPC tries it (gRPC logs its own failure on stderr, then only says it failed).
Status CheckCanListen(const std::string& host, int port) {
  namespace asio = boost::asio;
  using tcp = asio::ip::tcp;
  const std::string address = HostPort(host, port);
  asio::io_context io;
  boost::system::error_code ec;
  tcp::resolver resolver(io);
  const auto endpoints = resolver.resolve(BareHost(host), std::to_string(port),
                                          tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec == asio::error::host_not_found) {  // a name no resolver knows (999.1.1.1 too): the input, not the moment
    return Status::InvalidArgument("cannot listen on " + address + ": --host " + host + " is no address or known name");
  }
  if (ec) return Status::Unavailable("cannot listen on " + address + ": " + ec.message());
  for (const auto& entry : endpoints) {
    tcp::acceptor acceptor(io);
    acceptor.open(entry.endpoint().protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);  // as gRPC binds
    if (!ec) acceptor.bind(entry.endpoint(), ec);
    if (ec) return Status::Unavailable("cannot listen on " + address + ": " + ec.message());
  }
  return Status::OK();
}

// The certificate's first block and the key must make a pair: gRPC finds out only as it starts, in lines of its own
// and a failure to listen that names no cause.
Status CheckKeyPair(const std::string& cert, const std::string& key, const ServerOptions& o) {
  using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
  Bio cert_bio(BIO_new_mem_buf(cert.data(), static_cast<int>(cert.size())), &BIO_free);
  Bio key_bio(BIO_new_mem_buf(key.data(), static_cast<int>(key.size())), &BIO_free);
  if (!cert_bio || !key_bio) return Status::Internal("cannot read the TLS files: out of memory");
  // PemNoPassphrase: without a callback OpenSSL asks for a passphrase on the terminal (twice) before the line below
  // says that the key is protected by one; a daemon has none to give.
  std::unique_ptr<X509, decltype(&X509_free)> x509(
      PEM_read_bio_X509(cert_bio.get(), nullptr, &PemNoPassphrase, nullptr), &X509_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> pkey(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, &PemNoPassphrase, nullptr), &EVP_PKEY_free);
  const bool pair = x509 && pkey && X509_check_private_key(x509.get(), pkey.get()) == 1;
  ERR_clear_error();  // OpenSSL's error queue is per thread: leave nothing of ours for gRPC to read
  if (!x509) {
    return Status::InvalidArgument("TLS certificate '" + o.tls_cert_file +
                                   "': its first certificate cannot be read (damaged or truncated)");
  }
  if (!pkey) {
    return Status::InvalidArgument("TLS key '" + o.tls_key_file +
                                   "': the private key cannot be read (damaged, truncated, or protected by a "
                                   "passphrase)");
  }
  if (!pair) {
    return Status::InvalidArgument("TLS key '" + o.tls_key_file + "' is not the key of the certificate '" +
                                   o.tls_cert_file + "'");
  }
  // Clients would fail their handshakes with "certificate verify failed", which names no date.
  // The server's own certificate, the file's first (a chain's other certificates may be old cross-signs).
  if (const std::string out_of_date = CertificateOutOfDate(cert, std::time(nullptr), CertificatesJudged::kFirst);
      !out_of_date.empty()) {
    return Status::InvalidArgument("TLS certificate '" + o.tls_cert_file + "': " + out_of_date +
                                   "; no client accepts it");
  }
  return Status::OK();
}

Result<std::shared_ptr<grpc::ServerCredentials>> Credentials(const ServerOptions& o) {
  if (o.tls_cert_file.empty() && o.tls_key_file.empty()) return grpc::InsecureServerCredentials();
  if (o.tls_cert_file.empty() || o.tls_key_file.empty()) {
    return Status::InvalidArgument("TLS needs both --tls-cert and --tls-key");
  }
  TF_ASSIGN_OR_RETURN(std::string cert, ReadFile(o.tls_cert_file, "TLS certificate"));
  TF_ASSIGN_OR_RETURN(std::string key, ReadFile(o.tls_key_file, "TLS key"));
  if (!HasPemBlock(cert, "CERTIFICATE")) {
    return Status::InvalidArgument("TLS certificate '" + o.tls_cert_file + "': no PEM certificate in it");
  }
  if (!HasPemBlock(key, "PRIVATE KEY")) {
    return Status::InvalidArgument("TLS key '" + o.tls_key_file + "': no PEM private key in it");
  }
  TF_RETURN_IF_ERROR(CheckKeyPair(cert, key, o));
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({key, cert});
  return grpc::SslServerCredentials(ssl);
}

// The status page's options: at most a quarter of the files this process may open, up to the usual 64, so that
// idle connections to the page can never take the descriptors gRPC needs to accept (with `ulimit -n 64`, 100 idle
// ones did, and the gRPC port then stopped accepting for good; see Run).
HttpStatusOptions StatusPageOptions() {
  HttpStatusOptions options;
  if (rlimit limit{}; ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    options.max_connections = std::clamp<size_t>(limit.rlim_cur / 4, 1, options.max_connections);
  return options;
}

}  // namespace

Result<std::unique_ptr<TrackerServer>> TrackerServer::Start(const ServerOptions& o) {
  if (o.port < 0 || o.port > 65535) return Status::InvalidArgument("port out of range: " + std::to_string(o.port));
  if (o.lease_ttl <= 0) return Status::InvalidArgument("lease ttl must be > 0");
  if (o.heartbeat_timeout <= 0) return Status::InvalidArgument("heartbeat timeout must be > 0");
  if (o.max_message_mb <= 0) return Status::InvalidArgument("max message size must be > 0 MB");
  TF_ASSIGN_OR_RETURN(auto creds, Credentials(o));
  TF_RETURN_IF_ERROR(CheckCanListen(o.host, o.port));

  std::unique_ptr<TrackerServer> s(new TrackerServer());
  ServiceOptions so;
  so.state.lease_ttl = o.lease_ttl;
  so.state.heartbeat_timeout = o.heartbeat_timeout;
  so.state.max_agents = o.max_agents;
  so.session.register_timeout = o.heartbeat_timeout;  // a new stream may be silent as long as a registered one
  so.token = o.token;
  s->service_ = std::make_unique<TrackerService>(so);

  grpc::ServerBuilder builder;
  const std::string address = HostPort(o.host, o.port);
  builder.AddListeningPort(address, creds, &s->port_);
  builder.RegisterService(s->service_.get());
  // Without this, gRPC sets SO_REUSEPORT and a second tracker on the same port starts "successfully".
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(o.max_message_mb * 1024 * 1024);
  builder.SetMaxSendMessageSize(o.max_message_mb * 1024 * 1024);
  AcceptClientKeepalive(&builder);
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0) {
    s->service_->Stop();
    return Status::Unavailable("cannot listen on " + address + " (in use, or not a local address)");
  }
  if (o.http_port >= 0) {
    auto http = HttpStatus::Start(o.host, o.http_port, &s->service_->state(), StatusPageOptions());
    if (!http.ok()) {
      s->Shutdown(1);
      return http.status();
    }
    s->http_ = std::move(http).value();
    s->http_port_ = s->http_->port();
  }
  // Said once both ports are held: a status port that cannot be had ends the start without a "listening" line.
  spdlog::info("tunefleet-tracker {} listening on {}{}{}", TUNEFLEET_VERSION, HostPort(o.host, s->port_),
               o.tls_cert_file.empty() ? "" : " (TLS)", o.token.empty() ? "" : " (token required)");
  if (s->http_) spdlog::info("status page on http://{}/ (metrics at /metrics)", HostPort(o.host, s->http_port_));
  if (const std::string warning = OpenStatusPortWarning(o.host, !o.token.empty()); s->http_ && !warning.empty()) {
    spdlog::warn("{}", warning);
  }
  if (const std::string warning = OpenTrackerWarning(o.host, !o.token.empty()); !warning.empty()) {
    spdlog::warn("{}", warning);
  }
  return s;
}

TrackerServer::~TrackerServer() { Shutdown(5); }

void TrackerServer::Shutdown(double deadline_s) {
  if (shut_down_) return;
  shut_down_ = true;
  if (http_) http_->Stop();
  service_->Stop();  // ends agent sessions, Measure streams and waiting Acquires promptly
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(static_cast<int64_t>(deadline_s * 1000)));
    server_->Wait();
  }
}

namespace {

// gRPC's words when an accept on the listening port failed. The system's gRPC (1.51) then stops accepting on that
// port for good: every later connection waits unanswered in the kernel's queue, while the process and the open
// streams live on (grpc/grpc#20418; after "Too many open files", a burst of connections past the file limit).
constexpr std::string_view kAcceptFailed = "Failed accept4";

// The error line of a tracker whose gRPC port accepts no more connections; `grpc_says` is gRPC's message.
std::string AcceptStoppedLine(const std::string& grpc_says) {
  std::string line = "the gRPC port accepts no more connections (" + grpc_says + "; gRPC does not take up accepting " +
                     "again after that): stopping, exit 1, so that a service manager starts the tracker again " +
                     "(agents and tuner runs reconnect)";
  if (rlimit limit{}; grpc_says.find("Too many open files") != std::string::npos &&
                      ::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    line += "; this process may open " + std::to_string(limit.rlim_cur) +
            " files, one per connection: raise LimitNOFILE= in its unit (or ulimit -n)";
  }
  return line;
}

}  // namespace

int Run(const ServerOptions& options, GrpcLogRoute& grpc_logs) {
  // Block the stop signals in every thread (gRPC's threads inherit the mask) and wait for them here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // Set by gRPC's thread (under the route's lock), read here; cleared from the route before Run returns.
  std::mutex accept_mu;
  std::string accept_failed;  // gRPC's message; guarded by accept_mu
  grpc_logs.Watch([&](const std::string& message) {
    if (message.rfind(kAcceptFailed, 0) != 0) return;
    std::lock_guard<std::mutex> lock(accept_mu);
    if (accept_failed.empty()) accept_failed = message;
  });
  struct StopWatching {
    GrpcLogRoute& route;
    ~StopWatching() { route.Watch(nullptr); }
  } stop_watching{grpc_logs};

  auto server = TrackerServer::Start(options);
  if (!server.ok()) {
    // On stderr in the one line every tool says an error in, not as a log line on stdout: a start that fails is
    // answered like a bad option (a service manager's journal keeps stderr alike).
    const std::string why = Printable(server.status().message(), std::string::npos);
    std::fprintf(stderr, "tunefleet-tracker: error: %s\n", why.c_str());
    // Bad input (a TLS file that is not PEM, half of a TLS pair) is 2; a port that cannot be had is 1.
    return server.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  // Woken each second to see whether the port still accepts (there is no other way to learn it from gRPC).
  const timespec tick{1, 0};
  int sig = -1;
  while (sig < 0) {
    sig = sigtimedwait(&stop_signals, nullptr, &tick);
    std::string failed;
    {
      std::lock_guard<std::mutex> lock(accept_mu);
      failed = accept_failed;
    }
    if (sig < 0 && !failed.empty()) {
      spdlog::error("{}", AcceptStoppedLine(failed));
      (*server)->Shutdown(5);
      spdlog::info("tracker stopped");
      return 1;
    }
  }
  spdlog::info("{} received; shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
  (*server)->Shutdown(5);
  spdlog::info("tracker stopped");
  return 0;
}

}  // namespace tunefleet::tracker

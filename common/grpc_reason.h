// gRPC's words for a connection that failed, shortened to the reason a user acts on.
//
// gRPC says a refused connection as "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:9190:
// Failed to connect to remote host: Connection refused", and every line that said it already names the tracker's
// address: what is left is the system's reason ("Connection refused"), or the TLS library's ("Ssl handshake
// failed: ..."). A failed name lookup keeps the name and the resolver's reason, not its query's details. Words of
// gRPC's that name no cause a user knows ("Socket closed", "CANCELLED", "Failed parsing HTTP/2") get plain ones first.
#pragma once

#include <string>
#include <string_view>

namespace tunefleet {

// gRPC's words that name no cause a user knows, with the cause put first: "<plain words>: <gRPC's words>" (gRPC's
// stay, for a search and for TlsConnectionHint).
inline std::string WithPlainWords(std::string_view reason) {
  for (const std::string_view call : {"recvmsg:", "sendmsg:", "writev:", "read:", "write:"}) {
    if (reason.starts_with(call)) reason.remove_prefix(call.size());  // "recvmsg:Connection reset by peer"
  }
  struct Plain {
    std::string_view grpc, plain;
  };
  static constexpr Plain kPlain[] = {
      {"Socket closed", "the connection was closed"},
      {"CANCELLED", "the connection was lost"},
      {"Cancelled", "the connection was lost"},
      {"Cancelled on the server side", "the tracker ended the connection"},
      {"Failed parsing HTTP/2", "what answers there is not a tunefleet tracker"},
      {"connection attempt timed out before receiving SETTINGS frame",
       "the peer took the connection but did not answer"},
      {"Deadline Exceeded", "no answer in time"},
      {"tcp handshaker shutdown", "the attempt to connect was given up before it was made"},
  };
  for (const Plain& p : kPlain) {
    if (reason == p.grpc) return std::string(p.plain) + ": " + std::string(reason);
  }
  return std::string(reason);
}

inline std::string GrpcReason(std::string_view message) {
  constexpr std::string_view kEveryAddress = "failed to connect to all addresses; last error: ";
  constexpr std::string_view kRemoteHost = "Failed to connect to remote host: ";
  constexpr std::string_view kDns = "DNS resolution failed for ";
  std::string_view m = message;
  if (m.starts_with(kEveryAddress)) {
    m.remove_prefix(kEveryAddress.size());
    // The status code's name ("UNKNOWN: "), then the address tried ("ipv4:H:P: ", "ipv6:%5B::1%5D:P: ", "unix:F: ").
    if (const size_t colon = m.find(": "); colon != std::string_view::npos && colon > 0 &&
                                           m.substr(0, colon).find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
                                               std::string_view::npos) {
      m.remove_prefix(colon + 2);
    }
    for (const std::string_view scheme : {"ipv4:", "ipv6:", "unix:", "unix-abstract:"}) {
      if (!m.starts_with(scheme)) continue;
      if (const size_t colon = m.find(": "); colon != std::string_view::npos) m.remove_prefix(colon + 2);
      break;
    }
    if (m.starts_with(kRemoteHost)) m.remove_prefix(kRemoteHost.size());
    return m.empty() ? std::string(message) : WithPlainWords(m);
  }
  if (m.starts_with(kDns)) {
    const size_t name_end = m.find(": ", kDns.size());
    const size_t last = m.rfind(": ");
    if (name_end != std::string_view::npos && last > name_end) {
      return std::string(m.substr(0, name_end)) + std::string(m.substr(last));
    }
  }
  return WithPlainWords(message);
}

}  // namespace tunefleet

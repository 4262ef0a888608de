// The tracker's listening address in the two spellings it needs: "host:port" as gRPC and log lines take it (an IPv6
// host in brackets, [::1]:9190), and the bare host as a resolver or an IP parser takes it (::1).
// Thread safety: free functions, no state.
#pragma once

#include <string>

namespace tunefleet::tracker {

// `host` without the brackets of "[::1]"; any other host as it is.
inline std::string BareHost(const std::string& host) {
  const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  return bracketed ? host.substr(1, host.size() - 2) : host;
}

// host:port, an IPv6 host in brackets.
inline std::string HostPort(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos && host.front() != '[';
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace tunefleet::tracker

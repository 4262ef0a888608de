// Where the tracker's HTTP status port listens for a --host, as gRPC listens for the same --host: an IP address as it
// is, except a wildcard (0.0.0.0 or ::), which gRPC takes as every interface of both families, so the status port
// listens on [::] dual-stack (IPv4 clients as ::ffff:a.b.c.d) with 0.0.0.0 as the fallback on a host without IPv6;
// a name (localhost) at what it resolves to, in the resolver's order.
// Thread safety: free functions, no state.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace tunefleet::tracker {

struct ListenEndpoint {
  boost::asio::ip::tcp::endpoint endpoint;
  bool dual_stack = false;  // an IPv6 wildcard that takes IPv4 connections too (IPV6_V6ONLY off)
};

// The endpoints to try in order; the first that can be bound is used. InvalidArgument for a host that is no address
// or known name, Unavailable when the resolver fails.
Result<std::vector<ListenEndpoint>> ListenEndpoints(const std::string& host, int port);

}  // namespace tunefleet::tracker

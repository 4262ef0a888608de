#include "tracker/listen_endpoints.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>

#include "tracker/host_port.h"

namespace tunefleet::tracker {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

Result<std::vector<ListenEndpoint>> ListenEndpoints(const std::string& host, int port) {
  const auto port_number = static_cast<unsigned short>(port);
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(BareHost(host), ec);
  if (!ec && address.is_unspecified()) {
    return std::vector<ListenEndpoint>{{tcp::endpoint(tcp::v6(), port_number), true},
                                       {tcp::endpoint(tcp::v4(), port_number), false}};
  }
  if (!ec) return std::vector<ListenEndpoint>{{tcp::endpoint(address, port_number), false}};
  asio::io_context io;
  tcp::resolver resolver(io);
  const auto resolved = resolver.resolve(BareHost(host), std::to_string(port),
                                         tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec == asio::error::host_not_found || (!ec && resolved.empty())) {
    return Status::InvalidArgument("HTTP port: '" + host + "' is no address or known name");
  }
  if (ec) return Status::Unavailable("HTTP port: cannot resolve '" + host + "': " + ec.message());
  std::vector<ListenEndpoint> endpoints;
  for (const auto& entry : resolved) endpoints.push_back({entry.endpoint(), false});
  return endpoints;
}

}  // namespace tunefleet::tracker

// For tests: a throw-away self-signed certificate for 127.0.0.1 and localhost, made with the openssl tool.
#pragma once

#include <cstdlib>
#include <string>

namespace tunefleet::testing {

// Writes `dir`/cert.pem and `dir`/key.pem; false when the openssl tool is missing or fails.
inline bool MakeSelfSignedCertificate(const std::string& dir) {
  const std::string cmd =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost"
      " -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout " +
      dir + "/key.pem -out " + dir + "/cert.pem >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace tunefleet::testing

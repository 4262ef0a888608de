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

// Writes `dir`/expired/cert.pem and `dir`/expired/key.pem: a self-signed certificate for localhost valid on
// 2020-01-01 only (`openssl req` takes no date in the past; `openssl ca` does). False when the tool fails.
inline bool MakeExpiredCertificate(const std::string& dir) {
  const std::string at = dir + "/expired";
  const std::string cmd =
      "(mkdir -p " + at + " && cd " + at +
      " && : > index.txt && echo 01 > serial"
      " && printf '[ca]\\ndefault_ca = d\\n[d]\\ndatabase = index.txt\\nserial = serial\\nnew_certs_dir = .\\n"
      "default_md = sha256\\npolicy = p\\n[p]\\ncommonName = supplied\\n' > ca.cnf"
      " && openssl req -new -newkey rsa:2048 -nodes -subj /CN=localhost -keyout key.pem -out req.csr"
      " && openssl ca -batch -notext -config ca.cnf -selfsign -keyfile key.pem -in req.csr"
      " -startdate 20200101000000Z -enddate 20200102000000Z -out cert.pem) >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace tunefleet::testing

// Conversions between tunefleet::Status and grpc::Status: the one place where the server side maps error
// codes (STYLE.md 3). Thread safety: pure functions.
#pragma once

#include <grpcpp/support/status.h>

#include "common/status.h"

namespace tunefleet::tracker {

grpc::Status ToGrpc(const Status& status);

}  // namespace tunefleet::tracker

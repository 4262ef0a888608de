#include "tracker/grpc_status.h"

namespace tunefleet::tracker {

grpc::Status ToGrpc(const Status& status) {
  using C = Status::Code;
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  switch (status.code()) {
    case C::kOk: return grpc::Status::OK;
    case C::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case C::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case C::kIOError: code = grpc::StatusCode::INTERNAL; break;
    case C::kCorruption: code = grpc::StatusCode::DATA_LOSS; break;
    case C::kUnavailable: code = grpc::StatusCode::UNAVAILABLE; break;
    case C::kDeadlineExceeded: code = grpc::StatusCode::DEADLINE_EXCEEDED; break;
    case C::kPermissionDenied: code = grpc::StatusCode::PERMISSION_DENIED; break;
    case C::kInternal: code = grpc::StatusCode::INTERNAL; break;
    case C::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
  }
  return grpc::Status(code, status.message());
}

}  // namespace tunefleet::tracker

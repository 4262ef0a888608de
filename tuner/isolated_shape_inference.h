// ONNX's shape inference, run in a child process. libonnx (1.12, Debian's) trusts the model it infers: a Conv whose
// input rank differs from its weight's, a DepthToSpace of blocksize 2^62, an STFT of a scalar signal or a model-local
// function that calls itself kill the process (SIGSEGV, SIGFPE, a stack overflow) before any line is said. In a child,
// such a crash becomes one error line; the inferred model comes back through a pipe, serialized.
//
// Call it while the process has one thread (before any gRPC channel or signal thread): the child runs libonnx and
// protobuf code only, and leaves by _exit.
// Thread safety: none (it forks).
#pragma once

#include <onnx/onnx_pb.h>

#include "common/status.h"

namespace tunefleet {

// Infers the shapes of `model` in place, as onnx::shape_inference::InferShapes with strict mode and data propagation:
// its graphs' (and subgraphs') inputs, outputs and value_info are replaced by the inferred ones; its nodes are left
// as they are (the same objects).
// InvalidArgument "shape inference failed: ..." with ONNX's message, or naming the signal that ended the child.
Status InferShapesIsolated(onnx::ModelProto& model);

}  // namespace tunefleet

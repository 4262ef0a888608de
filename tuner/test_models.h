// Small ONNX models built in C++ with the ONNX protobuf API, with their weights as initializers (deterministic
// pseudo-random values), valid for onnx::checker. Used by the import tests and for trying the CLI by hand.
//
// ResNet-like (input "data" 1x3x32x32, opset 13):
//   stem   Conv 3->16 3x3 s1 p1 + Relu
//   2x     basic block 16->16: Conv 3x3 + Relu, Conv 3x3, Add(residual), Relu
//   1x     down block 16->32: Conv 3x3 s2 + Relu, Conv 3x3, shortcut Conv 1x1 s2, Add, Relu
//   head   GlobalAveragePool, Flatten, Gemm 32->10 (transB, bias)
//   => 7 tasks, 10 occurrences (the 16->16 3x3 conv 4 times: twice with Relu, twice without).
// MobileNet-like (input "data" 1x3x32x32, opset 13, Clip(0, 6) as ReLU6 with bounds as initializers):
//   stem   Conv 3->16 3x3 s2 p1 + Clip
//   2x     depthwise 16 3x3 s1 + Clip, pointwise 16->16 + Clip
//   1x     depthwise 16 3x3 s2 + Clip, pointwise 16->32 + Clip
//   head   GlobalAveragePool, Flatten, Gemm 32->10
//   => 7 tasks, 9 occurrences, 3 of them depthwise (2 distinct).
// Thread safety: free functions, no shared state.
#pragma once

#include <cstdint>
#include <string>

#include <onnx/onnx_pb.h>

#include "common/status.h"

namespace tunefleet {

onnx::ModelProto MakeResNetLikeModel();
onnx::ModelProto MakeMobileNetLikeModel();

// `model` with every float32 tensor (graph inputs and outputs, initializers) of `elem_type` instead (an
// onnx::TensorProto::DataType: FLOAT16, DOUBLE, INT32, ...), its initializers' data zeros of that type and its
// inferred shapes dropped: the same graph as a float16, float64 or int32 model.
onnx::ModelProto WithElemType(onnx::ModelProto model, int32_t elem_type);

// Serializes `model` to `path` (binary protobuf, the .onnx format). IOError naming the path, and the system's reason
// when there is one.
Status WriteOnnxModel(const onnx::ModelProto& model, const std::string& path);

}  // namespace tunefleet

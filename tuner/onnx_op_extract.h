// Turns one ONNX node (plus the Relu/Clip/Add nodes fused after it) into a tunable operator occurrence, or says
// why it is not tuned. Used by onnx_import.cc; the supported set is documented in onnx_import.h.
// Thread safety: free function over borrowed, unchanging data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tuner/onnx_graph_view.h"
#include "tuner/onnx_import.h"

namespace tunefleet {

struct ExtractedNode {
  std::optional<OpOccurrence> op;  // set when the node is tuned
  std::string not_tuned;           // else the label it is counted under: "Add", "Conv (asymmetric pads)"
  std::vector<int> fused;          // indices of the following nodes folded into `op` (not counted again)
  // Set when the node's shapes contradict each other (a weight whose input channels are not the input's, a bias
  // that is not one value per output channel): "node 'conv1' (Conv): ...", the node named as view.NodeName says
  // ("loop/body/conv1" in a subgraph). The model is refused, not tuned.
  std::string contradiction;
};

// The node at `index` of `graph`, which `view` views (a subgraph's view also sees its enclosing graphs' tensors);
// the nodes fused into it are of `graph` only. `opset` is the model's default-domain opset (Clip takes its bounds as
// attributes before 11, as inputs after).
ExtractedNode ExtractNode(const onnx::GraphProto& graph, const OnnxGraphView& view, int index, int64_t opset);

}  // namespace tunefleet

#include "tuner/onnx_op_extract.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "search-spaces/conv_common.h"

namespace tunefleet {
namespace {

using Dims = std::vector<int64_t>;

ExtractedNode NotTuned(const std::string& op, const std::string& why) {
  ExtractedNode e;
  e.not_tuned = why.empty() ? op : op + " (" + why + ")";
  return e;
}

std::string DimsText(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

ExtractedNode Contradiction(const OnnxGraphView& view, const onnx::NodeProto& node, int index,
                            const std::string& what) {
  ExtractedNode e;
  e.contradiction = "node '" + view.NodeName(node, index) + "' (" + node.op_type() + "): " + what;
  return e;
}

// The single consumer of the node's first output, when nothing else (graph outputs included) reads it.
const onnx::NodeProto* SoleConsumer(const onnx::GraphProto& graph, const OnnxGraphView& view,
                                    const onnx::NodeProto& node, int* consumer_index) {
  if (node.output_size() < 1 || view.IsGraphOutput(node.output(0))) return nullptr;
  const auto& consumers = view.Consumers(node.output(0));
  if (consumers.size() != 1) return nullptr;
  *consumer_index = consumers[0];
  return &graph.node(consumers[0]);
}

// Relu -> kRelu; Clip with known bounds [0, 6] -> kRelu6, [0, +inf) -> kRelu; anything else -> nullopt. Only
// ONNX's own operators: a "Relu" of a custom domain computes whatever that domain says.
std::optional<Activation> ActivationOf(const onnx::NodeProto& node, const OnnxGraphView& view, int64_t opset) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  if (node.op_type() == "Relu") return Activation::kRelu;
  if (node.op_type() != "Clip") return std::nullopt;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  if (opset < 11) {
    lo = AttrFloat(node, "min", lo);
    hi = AttrFloat(node, "max", hi);
  } else {
    for (int i = 1; i <= 2 && i < node.input_size(); ++i) {
      if (node.input(i).empty()) continue;
      auto v = view.ConstantFloats(node.input(i));
      if (!v || v->size() != 1) return std::nullopt;  // bounds computed at run time, or stripped: not fused
      (i == 1 ? lo : hi) = (*v)[0];
    }
  }
  if (lo == 0.0f && hi == 6.0f) return Activation::kRelu6;
  if (lo == 0.0f && std::isinf(hi)) return Activation::kRelu;
  return std::nullopt;
}

// Fuses a following activation into `e` when the node's output feeds only that activation.
void FuseActivation(const onnx::GraphProto& graph, const OnnxGraphView& view, const onnx::NodeProto& node,
                    int64_t opset, ExtractedNode* e) {
  int ci = -1;
  const onnx::NodeProto* next = SoleConsumer(graph, view, node, &ci);
  if (next == nullptr) return;
  auto act = ActivationOf(*next, view, opset);
  if (!act) return;
  e->op->activation = *act;
  e->op->onnx_ops += "+" + next->op_type();
  e->fused.push_back(ci);
}

// Pads for one spatial axis: explicit, or from auto_pad (a value SpatialWindow accepts). Returns {begin, end}.
std::pair<int64_t, int64_t> AxisPads(const std::string& auto_pad, const Dims& pads, int axis, int64_t in,
                                     int64_t k, int64_t stride, int64_t dilation) {
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    int64_t out = (in + stride - 1) / stride;
    int64_t total = std::max<int64_t>(0, (out - 1) * stride + (k - 1) * dilation + 1 - in);
    int64_t small = total / 2;
    return auto_pad == "SAME_UPPER" ? std::make_pair(small, total - small) : std::make_pair(total - small, small);
  }
  if (auto_pad == "VALID") return {0, 0};
  return {pads[axis], pads[axis + 2]};
}

// Spatial attributes shared by Conv and the pools, checked to be expressible as one stride/pad/dilation.
struct Window {
  int64_t stride = 1, pad = 0, dilation = 1;
  std::string why_not;  // non-empty when not expressible
};

Window SpatialWindow(const onnx::NodeProto& node, const Dims& x, int64_t kh, int64_t kw) {
  Window w;
  Dims strides = AttrInts(node, "strides", {1, 1});
  Dims dil = AttrInts(node, "dilations", {1, 1});
  Dims pads = AttrInts(node, "pads", {0, 0, 0, 0});
  std::string auto_pad = AttrString(node, "auto_pad", "NOTSET");
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) {
    w.why_not = "not 2-D";
    return w;
  }
  // Any other value ("SAME", "same_upper") has no meaning in ONNX; read as NOTSET it padded by `pads` (or 0) where
  // its author meant something else.
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID") {
    w.why_not = "auto_pad '" + auto_pad + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID";
    return w;
  }
  auto [hb, he] = AxisPads(auto_pad, pads, 0, x[2], kh, strides[0], dil[0]);
  auto [wb, we] = AxisPads(auto_pad, pads, 1, x[3], kw, strides[1], dil[1]);
  if (strides[0] != strides[1]) w.why_not = "stride differs between H and W";
  if (dil[0] != dil[1]) w.why_not = "dilation differs between H and W";
  if (hb != wb) w.why_not = "pad differs between H and W";  // a 1x7 "same" conv: tasks carry one pad
  if (hb != he || wb != we) w.why_not = "asymmetric pads";
  w.stride = strides[0];
  w.dilation = dil[0];
  w.pad = hb;
  return w;
}

ExtractedNode ExtractConv(const onnx::GraphProto& graph, const OnnxGraphView& view, int index, int64_t opset) {
  const auto& node = graph.node(index);
  auto x = view.StaticShape(node.input(0));
  auto wt = node.input_size() > 1 ? view.StaticShape(node.input(1)) : std::nullopt;
  if (!x || !wt) return NotTuned("Conv", "shape unknown");
  if (x->size() != 4 || wt->size() != 4) return NotTuned("Conv", "not 2-D");
  const int64_t n = (*x)[0], c = (*x)[1], h = (*x)[2], w = (*x)[3];
  const int64_t k = (*wt)[0], kh = (*wt)[2], kw = (*wt)[3];
  const int64_t groups = AttrInt(node, "group", 1);
  // Shape inference takes the output's channels from the weight and checks nothing else of it.
  if (groups < 1) return Contradiction(view, node, index, "group " + std::to_string(groups) + " (must be 1 or more)");
  if (c % groups != 0 || k % groups != 0)
    return Contradiction(view, node, index, "group " + std::to_string(groups) + " does not divide the input's " +
                                                std::to_string(c) + " channels and the weight's " + std::to_string(k) +
                                                " filters");
  if ((*wt)[1] * groups != c)
    return Contradiction(view, node, index, "the weight " + DimsText(*wt) + " takes " + std::to_string((*wt)[1]) +
                                                " input channel(s) per group x " + std::to_string(groups) +
                                                " group(s), but the input " + DimsText(*x) + " has " +
                                                std::to_string(c));
  // kernel_shape is optional; where given, the weight's spatial dims must be it (the kernels are sized from the
  // weight).
  if (Dims ks = AttrInts(node, "kernel_shape", {}); !ks.empty() && ks != Dims{kh, kw}) {
    return Contradiction(view, node, index, "kernel_shape " + DimsText(ks) + " disagrees with the weight " +
                                                DimsText(*wt) + " (" + std::to_string(kh) + "x" + std::to_string(kw) +
                                                ")");
  }
  if (node.input_size() > 2 && !node.input(2).empty()) {
    if (auto b = view.StaticShape(node.input(2)); b && (b->size() != 1 || (*b)[0] != k))
      return Contradiction(view, node, index, "the bias " + DimsText(*b) + " is not one value per output channel ([" +
                                                  std::to_string(k) + "])");
  }
  Window win = SpatialWindow(node, *x, kh, kw);
  if (!win.why_not.empty()) return NotTuned("Conv", win.why_not);
  const bool bias = node.input_size() > 2 && !node.input(2).empty();

  ExtractedNode e;
  OpOccurrence op;
  op.node = view.NodeName(node, index);
  op.onnx_ops = "Conv";
  const bool depthwise = groups > 1 && groups == c && k == c;
  if (depthwise) {
    op.task.op = "dwconv2d";
    op.task.params = {{"N", n}, {"C", c}, {"H", h}, {"W", w}, {"KH", kh}, {"KW", kw},
                      {"stride", win.stride}, {"pad", win.pad}};
  } else {
    op.task.op = "conv2d";
    op.task.params = {{"N", n}, {"C", c}, {"H", h}, {"W", w}, {"K", k}, {"KH", kh}, {"KW", kw},
                      {"stride", win.stride}, {"pad", win.pad}};
    if (groups != 1) op.task.params.emplace_back("groups", groups);
  }
  if (win.dilation != 1) op.task.params.emplace_back("dilation", win.dilation);
  if (bias) op.task.params.emplace_back("bias", 1);
  // A convolution the model cannot run (a kernel larger than the padded input: an output of -1 x -1) is the
  // model's contradiction, said as `tune` would say it of the task.
  if (Result<ConvShape> shape = ConvShapeFromTask(op.task); !shape.ok()) {
    return Contradiction(view, node, index, shape.status().message());
  }
  op.workload = {{"input", *x}, {"weight", *wt}, {"strides", win.stride}, {"pad", win.pad},
                 {"dilation", win.dilation}, {"groups", groups}, {"bias", bias}};
  if (auto y = view.Shape(node.output(0))) op.workload["output"] = *y;
  e.op = std::move(op);
  FuseActivation(graph, view, node, opset, &e);
  return e;
}

// The product of d[from, to), held at INT64_MAX past it (the task's bounds then refuse it, as they refuse a Conv's
// sizes that multiply past 2^62): a MatMul's batch dims of 2^62+1 x 4 wrapped round to an M of 4.
int64_t Product(const Dims& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) {
    if (__builtin_mul_overflow(p, d[i], &p)) return std::numeric_limits<int64_t>::max();
  }
  return p;
}

// Whether a tensor of shape `c` added to a GEMM's [.., M, N] output is a bias over its N outputs: [N], [1, N],
// [1, 1, N], ... (a scalar when N is 1). Counting its elements is not enough: [M, 1] with M == N holds N of them but
// adds one value per row.
bool IsBiasRow(const Dims& c, int64_t n) {
  if (c.empty()) return n == 1;
  if (c.back() != n) return false;
  return std::all_of(c.begin(), c.end() - 1, [](int64_t d) { return d == 1; });
}

ExtractedNode ExtractGemm(const onnx::GraphProto& graph, const OnnxGraphView& view, int index, int64_t opset) {
  const auto& node = graph.node(index);
  auto a = view.StaticShape(node.input(0));
  auto b = node.input_size() > 1 ? view.StaticShape(node.input(1)) : std::nullopt;
  if (!a || !b) return NotTuned("Gemm", "shape unknown");
  if (a->size() != 2 || b->size() != 2) return NotTuned("Gemm", "not 2-D");
  if (AttrInt(node, "transA", 0) != 0) return NotTuned("Gemm", "transA");
  const bool transb = AttrInt(node, "transB", 0) != 0;
  if (AttrFloat(node, "alpha", 1.0f) != 1.0f) return NotTuned("Gemm", "alpha not 1");
  // beta scales C: 1 makes C the bias, 0 leaves it out (as ONNX runtimes skip it), anything else is not a task.
  const float beta = AttrFloat(node, "beta", 1.0f);
  const bool has_c = node.input_size() > 2 && !node.input(2).empty();
  if (has_c && beta != 0.0f && beta != 1.0f) return NotTuned("Gemm", "beta not 0 or 1");
  const bool bias = has_c && beta == 1.0f;
  const int64_t m = (*a)[0], kk = (*a)[1], n = transb ? (*b)[0] : (*b)[1];
  if (kk != (transb ? (*b)[1] : (*b)[0]))
    return Contradiction(view, node, index, "A " + DimsText(*a) + " and B " + DimsText(*b) +
                                                (transb ? " (transB)" : "") + " do not agree on K");
  if (bias) {
    auto c = view.StaticShape(node.input(2));
    if (!c || !IsBiasRow(*c, n)) return NotTuned("Gemm", "C is not a bias row");
  }
  ExtractedNode e;
  OpOccurrence op;
  op.node = view.NodeName(node, index);
  op.onnx_ops = "Gemm";
  op.task.op = "gemm";
  op.task.params = {{"M", m}, {"N", n}, {"K", kk}};
  if (transb) op.task.params.emplace_back("transb", 1);
  if (bias) op.task.params.emplace_back("bias", 1);
  op.workload = {{"a", *a}, {"b", *b}, {"transb", transb}, {"bias", bias}};
  if (auto y = view.Shape(node.output(0))) op.workload["output"] = *y;
  e.op = std::move(op);
  FuseActivation(graph, view, node, opset, &e);
  return e;
}

ExtractedNode ExtractMatMul(const onnx::GraphProto& graph, const OnnxGraphView& view, int index, int64_t opset) {
  const auto& node = graph.node(index);
  auto a = view.StaticShape(node.input(0));
  auto b = node.input_size() > 1 ? view.StaticShape(node.input(1)) : std::nullopt;
  if (!a || !b) return NotTuned("MatMul", "shape unknown");
  if (a->size() < 2 || b->size() < 2) return NotTuned("MatMul", "vector operand");
  const int64_t kk = a->back(), n = b->back();
  if (kk != (*b)[b->size() - 2])
    return Contradiction(view, node, index, "A " + DimsText(*a) + " and B " + DimsText(*b) + " do not agree on K");
  int64_t m = 0, batch = 1;
  if (b->size() == 2) {
    m = Product(*a, 0, a->size() - 1);  // a batched A against one B is one tall GEMM
  } else if (Dims(a->begin(), a->end() - 2) == Dims(b->begin(), b->end() - 2)) {
    m = (*a)[a->size() - 2];
    batch = Product(*a, 0, a->size() - 2);
  } else {
    return NotTuned("MatMul", "broadcast batch");
  }
  ExtractedNode e;
  OpOccurrence op;
  op.node = view.NodeName(node, index);
  op.onnx_ops = "MatMul";
  op.task.op = "gemm";
  op.task.params = {{"M", m}, {"N", n}, {"K", kk}};
  if (batch != 1) op.task.params.emplace_back("batch", batch);
  op.workload = {{"a", *a}, {"b", *b}, {"transb", false}};
  // A following Add of a constant [N] vector is the dense layer's bias.
  const onnx::NodeProto* tail = &node;
  int ci = -1;
  // ONNX's own Add of two inputs only: a custom domain's "Add" (of no inputs, in a fuzzed model) computes whatever
  // that domain says, and reading its inputs failed protobuf's CHECK.
  const auto* add = SoleConsumer(graph, view, node, &ci);
  if (add != nullptr && add->op_type() == "Add" && (add->domain().empty() || add->domain() == "ai.onnx") &&
      add->input_size() == 2 && add->output_size() >= 1) {
    const std::string& other = add->input(0) == node.output(0) ? add->input(1) : add->input(0);
    auto c = view.Shape(other);
    if (view.Constant(other) != nullptr && c && IsBiasRow(*c, n)) {
      op.task.params.emplace_back("bias", 1);
      op.onnx_ops += "+Add";
      e.fused.push_back(ci);
      tail = add;
    }
  }
  op.workload["bias"] = tail != &node;
  if (auto y = view.Shape(tail->output(0))) op.workload["output"] = *y;
  e.op = std::move(op);
  FuseActivation(graph, view, *tail, opset, &e);
  return e;
}

ExtractedNode ExtractPool(const onnx::GraphProto& graph, const OnnxGraphView& view, int index) {
  const auto& node = graph.node(index);
  const std::string& type = node.op_type();
  auto x = view.StaticShape(node.input(0));
  if (!x) return NotTuned(type, "shape unknown");
  if (x->size() != 4) return NotTuned(type, "not 2-D");
  const int64_t n = (*x)[0], c = (*x)[1], h = (*x)[2], w = (*x)[3];
  int64_t kh = h, kw = w;
  Window win;
  const bool global = type == "GlobalAveragePool";
  if (type != "GlobalAveragePool") {
    Dims ks = AttrInts(node, "kernel_shape", {});
    if (ks.size() != 2) return NotTuned(type, "not 2-D");
    kh = ks[0];
    kw = ks[1];
    if (node.output_size() > 1 && !node.output(1).empty()) return NotTuned(type, "indices output");
    win = SpatialWindow(node, *x, kh, kw);
    if (!win.why_not.empty()) return NotTuned(type, win.why_not);
    if (win.dilation != 1) return NotTuned(type, "dilation");
    // What pool.worksize runs (search-spaces/pool_worksize.cc, Shape): an output of at least 1x1 and a pad smaller
    // than the window; `tasks` listed pools beyond it that only `tune` refused, as it did convolutions. The output
    // is counted with floor division, as ONNX does (a 9x9 window over 8x8 at stride 2 has none).
    if (kh < 1 || kw < 1) return NotTuned(type, "kernel_shape " + DimsText(ks));  // refused by the task's bounds too
    // Written so that a pad near 2^62 does not overflow h + 2 * pad (a negative pad is the task's bounds' to refuse).
    const auto larger = [&win](int64_t k, int64_t in) { return k > in && (k - in + 1) / 2 > win.pad; };
    if (win.pad >= 0 && (larger(kh, h) || larger(kw, w))) {
      return Contradiction(view, node, index, "the " + std::to_string(kh) + "x" + std::to_string(kw) +
                                                  " window is larger than the padded input " + DimsText(*x) + " (pad " +
                                                  std::to_string(win.pad) + ")");
    }
    if (win.pad >= 0 && (win.pad >= kh || win.pad >= kw)) {
      return Contradiction(view, node, index, "pad " + std::to_string(win.pad) + " is not smaller than the " +
                                                  std::to_string(kh) + "x" + std::to_string(kw) +
                                                  " window (a window over padding alone has no value)");
    }
    if (type == "AveragePool" && win.pad > 0 && AttrInt(node, "count_include_pad", 0) != 0) {
      return NotTuned(type, "count_include_pad");
    }
    // ceil_mode adds a last, partial window where the windows do not fit the padded input exactly; where they do, it
    // changes nothing (torchvision exports it so on pools that divide their input). Nor under auto_pad SAME_*, whose
    // output is ceil(in / stride) either way.
    const auto exact = [&win](int64_t k, int64_t in) {
      return (static_cast<__int128>(in) + 2 * static_cast<__int128>(win.pad) - k) % win.stride == 0;
    };
    const bool same = AttrString(node, "auto_pad", "NOTSET").starts_with("SAME_");
    if (AttrInt(node, "ceil_mode", 0) != 0 && !same && !(win.stride > 0 && exact(kh, h) && exact(kw, w))) {
      return NotTuned(type, "ceil_mode, with a partial last window");
    }
  }
  ExtractedNode e;
  OpOccurrence op;
  op.node = view.NodeName(node, index);
  op.onnx_ops = type;
  op.task.op = "pool";
  op.task.params = {{"N", n}, {"C", c}, {"H", h}, {"W", w}, {"KH", kh}, {"KW", kw},
                    {"stride", win.stride}, {"pad", win.pad}};
  if (type != "MaxPool") op.task.params.emplace_back("mode", 1);  // op_signature.h: mode 0 max, 1 avg
  if (global) op.task.params.emplace_back("global", 1);
  op.workload = {{"input", *x}, {"kernel", Dims{kh, kw}}, {"strides", win.stride}, {"pad", win.pad},
                 {"pool", type}};
  if (auto y = view.Shape(node.output(0))) op.workload["output"] = *y;
  e.op = std::move(op);
  return e;
}

// The precision of the tasks of a node whose tensors (every input: data, weight, bias) are of one float type:
// float32, or float16 (the model's own half tensors, see model_tasks.h); else the not-tuned reason, naming the type.
struct TensorType {
  Precision precision = Precision::kFloat32;
  std::string why_not;
};

TensorType NodeTensorType(const onnx::NodeProto& node, const OnnxGraphView& view) {
  TensorType out;
  int32_t type = onnx::TensorProto::UNDEFINED;
  for (const std::string& in : node.input()) {
    if (in.empty()) continue;
    const int32_t t = view.ElemType(in);
    if (t == onnx::TensorProto::UNDEFINED) {
      out.why_not = "element type unknown";
      return out;
    }
    if (type != onnx::TensorProto::UNDEFINED && t != type) {
      out.why_not = "mixed " + ElemTypeName(type) + " and " + ElemTypeName(t) + " tensors";
      return out;
    }
    type = t;
  }
  if (type == onnx::TensorProto::FLOAT16) {
    out.precision = Precision::kFloat16;
  } else if (type != onnx::TensorProto::FLOAT) {
    out.why_not = ElemTypeName(type) + " tensors";
  }
  return out;
}

ExtractedNode ExtractSupported(const onnx::GraphProto& graph, const OnnxGraphView& view, int index, int64_t opset) {
  const auto& node = graph.node(index);
  const bool onnx_domain = node.domain().empty() || node.domain() == "ai.onnx";
  const std::string& t = node.op_type();
  const bool supported = onnx_domain && (t == "Conv" || t == "Gemm" || t == "MatMul" || t == "MaxPool" ||
                                         t == "AveragePool" || t == "GlobalAveragePool");
  if (!supported) return NotTuned(onnx_domain ? t : node.domain() + "." + t, "");
  // The kernels are float32 or half: an int32 MatMul was tuned as a float32 GEMM, a float64 Conv as a float32 one.
  const TensorType type = NodeTensorType(node, view);
  if (!type.why_not.empty()) return NotTuned(t, type.why_not);
  ExtractedNode e;
  if (t == "Conv") {
    e = ExtractConv(graph, view, index, opset);
  } else if (t == "Gemm") {
    e = ExtractGemm(graph, view, index, opset);
  } else if (t == "MatMul") {
    e = ExtractMatMul(graph, view, index, opset);
  } else {
    e = ExtractPool(graph, view, index);
  }
  if (e.op) e.op->task.precision = type.precision;
  return e;
}

}  // namespace

ExtractedNode ExtractNode(const onnx::GraphProto& graph, const OnnxGraphView& view, int index, int64_t opset) {
  ExtractedNode e = ExtractSupported(graph, view, index, opset);
  if (!e.op) return e;
  // Round-trip through the spec parser: params in the op signature's order, values within its bounds.
  auto task = Task::Parse(e.op->task.ToSpec());
  if (!task.ok()) return NotTuned(graph.node(index).op_type(), "task rejected: " + task.status().message());
  e.op->task = std::move(*task);
  return e;
}

}  // namespace tunefleet

#include "tuner/isolated_shape_inference.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

#include "common/owned_fd.h"
#include "common/printable.h"

namespace tunefleet {
namespace {

constexpr char kInferred = 'O';  // then the inferred model, serialized
constexpr char kRefused = 'E';   // then ONNX's message

// The message quotes the model (names, bytes of a damaged file): escaped, and cut to a line.
std::string OneLine(std::string what) {
  for (char& c : what) c = c == '\n' ? ' ' : c;
  return Printable(what, 400, PrintableBytes::kAsciiOnly);
}

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The tensors in `graph`'s node attributes (Constant nodes' values), in subgraphs too, emptied: the parent has them,
// and TakeInferred takes none. A model of a 300 MB Constant took twice its memory, sent back whole.
void DropAttributeTensors(onnx::GraphProto& graph) {
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) attr.mutable_t()->Clear();
      for (onnx::TensorProto& t : *attr.mutable_tensors()) t.Clear();
      if (attr.has_g()) DropAttributeTensors(*attr.mutable_g());
      for (onnx::GraphProto& g : *attr.mutable_graphs()) DropAttributeTensors(g);
    }
  }
}

// In the child: infer, answer, leave without running the parent's atexit handlers or flushing its stdio buffers.
[[noreturn]] void InferInChild(onnx::ModelProto& model, int out, pid_t parent) {
  // A parent killed by a signal sent to it alone (Ctrl-C reaches the whole process group) takes the child with it.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) _exit(1);
  // A crash ends the child by its own signal, which the parent names, whatever handler the process had for it (a
  // sanitizer's turned a SIGSEGV into an abort, said as SIGABRT).
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
  std::string answer;
  try {
    // error_mode 1: a node whose shapes contradict its operator is an error, not silently skipped.
    onnx::ShapeInferenceOptions si(/*check_type_val=*/false, /*strict_mode_val=*/1, /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), si);
    model.mutable_graph()->clear_initializer();  // the weights: the parent has them, TakeInferred takes none
    DropAttributeTensors(*model.mutable_graph());
    answer = std::string(1, kInferred);
    if (!model.AppendToString(&answer)) {
      answer = std::string(1, kRefused) + "the inferred model could not be serialized";
    }
  } catch (const std::exception& e) {
    answer = std::string(1, kRefused) + e.what();
  }
  _exit(WriteAll(out, answer) ? 0 : 1);
}

// What inference wrote (the types of a graph's inputs, outputs and intermediates, in subgraphs too) taken from
// `inferred` into `graph`, whose nodes stay the objects they were: a caller may hold pointers to them. False when the
// two graphs are not the same graph (then nothing is taken from that graph on).
bool TakeInferred(onnx::GraphProto& graph, onnx::GraphProto& inferred) {
  if (graph.node_size() != inferred.node_size()) return false;
  graph.mutable_input()->Swap(inferred.mutable_input());
  graph.mutable_output()->Swap(inferred.mutable_output());
  graph.mutable_value_info()->Swap(inferred.mutable_value_info());
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    onnx::NodeProto& theirs = *inferred.mutable_node(i);
    if (node.attribute_size() != theirs.attribute_size()) return false;
    for (int a = 0; a < node.attribute_size(); ++a) {
      onnx::AttributeProto& attr = *node.mutable_attribute(a);
      onnx::AttributeProto& their_attr = *theirs.mutable_attribute(a);
      if (attr.has_g() && (!their_attr.has_g() || !TakeInferred(*attr.mutable_g(), *their_attr.mutable_g()))) {
        return false;
      }
      if (attr.graphs_size() != their_attr.graphs_size()) return false;
      for (int g = 0; g < attr.graphs_size(); ++g) {
        if (!TakeInferred(*attr.mutable_graphs(g), *their_attr.mutable_graphs(g))) return false;
      }
    }
  }
  return true;
}

}  // namespace

Status InferShapesIsolated(onnx::ModelProto& model) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::IOError(std::string("pipe: ") + std::strerror(errno));
  OwnedFd read_end(fds[0]), write_end(fds[1]);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) return Status::IOError(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    read_end.reset();
    InferInChild(model, write_end.get(), parent);
  }
  write_end.reset();  // so that the read below sees the end when the child is gone
  std::string answer;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  int wstatus = 0;
  while (::waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    const char* name = sigabbrev_np(sig);
    return Status::InvalidArgument("shape inference failed: ONNX's shape inference crashed on this model (SIG" +
                                   std::string(name != nullptr ? name : std::to_string(sig)) +
                                   "): a malformed node, such as a Conv whose input rank differs from its weight's "
                                   "(onnx.checker.check_model(model, full_check=True) may name it)");
  }
  if (answer.empty() || (answer[0] != kInferred && answer[0] != kRefused) || !WIFEXITED(wstatus)) {
    return Status::Internal("shape inference: its process ended without an answer (exit status " +
                            std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) + ")");
  }
  if (answer[0] == kRefused) return Status::InvalidArgument("shape inference failed: " + OneLine(answer.substr(1)));
  onnx::ModelProto inferred;
  if (!inferred.ParseFromArray(answer.data() + 1, static_cast<int>(answer.size() - 1))) {
    return Status::Internal("shape inference: the inferred model came back unreadable");
  }
  if (!inferred.has_graph() || !TakeInferred(*model.mutable_graph(), *inferred.mutable_graph())) {
    return Status::Internal("shape inference: the inferred model came back with other nodes");
  }
  return Status::OK();
}

}  // namespace tunefleet

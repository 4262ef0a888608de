// Checks of a kernel program that need no device, in one place for the two that make them: the agent, which refuses
// such a program as malformed (HOST_GENERATION_FAILED), and `tunefleet measure --program`, which says so in one line
// before a device is leased.
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "proto/tunefleet.pb.h"

namespace tunefleet {

inline constexpr char kNoTimedLaunch[] = "the program has no timed launch: nothing to measure";

// Whether a launch of `p` is timed: without one a program measures nothing (its cost would be the timer's own). A
// reference needs none: it only runs.
inline bool HasTimedLaunch(const proto::KernelProgram& p) {
  return std::any_of(p.launches().begin(), p.launches().end(),
                     [](const proto::KernelLaunch& l) { return l.phase() == proto::KernelLaunch::TIMED; });
}

// What is wrong with the tolerances of `p`'s comparison with its reference ("rtol nan is not a tolerance ..."):
// NaN would fail every element (error <= atol + rtol * |want| is never true), a negative one every exact element.
// Empty when they are fine, or when there is no reference to compare with.
inline std::string ToleranceProblem(const proto::KernelProgram& p) {
  if (!p.has_reference()) return "";
  for (const auto& [name, value] : {std::pair<const char*, float>{"atol", p.atol()}, {"rtol", p.rtol()}}) {
    if (!std::isfinite(value) || value < 0) {
      return std::string(name) + " " + std::to_string(value) + " is not a tolerance (a finite number of 0 or more)";
    }
  }
  return "";
}

// The number of elements of `p`'s buffer `name`; 0 when it declares none of that name.
inline uint64_t BufferCount(const proto::KernelProgram& p, const std::string& name) {
  for (const auto& buffer : p.buffers()) {
    if (buffer.name() == name) return buffer.count();
  }
  return 0;
}

// What is wrong with the structure of `p`, in the words the agent reports it ("kernel 'k': unknown buffer 'x'"): a
// buffer that is empty or declared twice, of a type or init the protocol does not define (a newer tuner's: measured
// as float32, or zeros, without a word), or random between bounds that are no range, an image declared twice or of
// an undefined type, an output buffer not declared, a tolerance that is none, a launch without a kernel name, whose
// global size has no dimension, more than 3 or a 0, whose local size has other dimensions, or an argument that names
// no declared memory or has no value; with a reference and an output buffer: a reference without an output or of such
// faults itself, or outputs of sizes that cannot be compared (compare_count past either, or, without one, two sizes).
// Empty when there is none. The device's limits (sizes, work-group, local memory) are the agent's to check.
inline std::string StructureProblem(const proto::KernelProgram& p) {
  std::set<std::string> buffers, images;
  for (const auto& buffer : p.buffers()) {
    if (buffer.count() == 0) return "buffer '" + buffer.name() + "' is empty";
    if (!buffers.insert(buffer.name()).second) return "buffer '" + buffer.name() + "' is declared twice";
    if (!proto::ElemType_IsValid(buffer.type())) {
      return "buffer '" + buffer.name() + "': type " + std::to_string(buffer.type()) +
             " is none this agent knows (float32, float16, int32): a newer tuner's?";
    }
    if (!proto::BufferSpec::Init_IsValid(buffer.init())) {
      return "buffer '" + buffer.name() + "': init " + std::to_string(buffer.init()) +
             " is none this agent knows (zeros, random, nans): a newer tuner's?";
    }
    if (buffer.init() == proto::BufferSpec::RANDOM &&
        (!std::isfinite(buffer.lo()) || !std::isfinite(buffer.hi()) || buffer.lo() > buffer.hi())) {
      return "buffer '" + buffer.name() + "': random between lo " + std::to_string(buffer.lo()) + " and hi " +
             std::to_string(buffer.hi()) + ", which is no range (finite, lo at most hi)";
    }
  }
  for (const auto& image : p.images()) {
    if (!images.insert(image.name()).second) return "image '" + image.name() + "' is declared twice";
    if (!proto::ElemType_IsValid(image.type())) {
      return "image '" + image.name() + "': type " + std::to_string(image.type()) +
             " is none this agent knows (float32, float16, int32): a newer tuner's?";
    }
  }
  if (!p.output_buffer().empty() && !buffers.count(p.output_buffer())) {
    return "output buffer '" + p.output_buffer() + "' is not declared";
  }
  if (std::string tolerance = ToleranceProblem(p); !tolerance.empty()) return tolerance;
  for (const auto& launch : p.launches()) {
    if (launch.entry().empty()) return "a launch names no kernel (its entry is empty)";
    const std::string where = "kernel '" + launch.entry() + "'";
    const int dims = launch.global_size_size();
    if (dims < 1 || dims > 3) return where + ": global size must have 1 to 3 dimensions";
    if (launch.local_size_size() != 0 && launch.local_size_size() != dims) {
      return where + ": local size and global size differ in dimensions";
    }
    if (std::count(launch.global_size().begin(), launch.global_size().end(), 0) > 0) return where + ": global size 0";
    for (const auto& arg : launch.args()) {
      if (arg.has_buffer() && !buffers.count(arg.buffer())) return where + ": unknown buffer '" + arg.buffer() + "'";
      if (arg.has_image() && !images.count(arg.image())) return where + ": unknown image '" + arg.image() + "'";
      if (arg.value_case() == proto::KernelArg::VALUE_NOT_SET) return where + ": an argument has no value";
    }
  }
  // The reference runs only where there is an output to compare it with (Executor::Run): only then is it checked.
  if (p.has_reference() && !p.output_buffer().empty()) {
    const proto::KernelProgram& ref = p.reference();
    if (std::string problem = StructureProblem(ref); !problem.empty()) return "the reference: " + problem;
    if (ref.output_buffer().empty()) return "the reference: no output buffer to compare with";
    const uint64_t ours = BufferCount(p, p.output_buffer()), theirs = BufferCount(ref, ref.output_buffer());
    if (p.compare_count() == 0 && ours != theirs) {
      return "the output has " + std::to_string(ours) + " elements, the reference's " + std::to_string(theirs) +
             ": give compare_count to compare the first ones";
    }
    if (p.compare_count() > std::min(ours, theirs)) {
      return "compare_count " + std::to_string(p.compare_count()) + " exceeds the output (" + std::to_string(ours) +
             ") or the reference's (" + std::to_string(theirs) + ")";
    }
  }
  return "";
}

}  // namespace tunefleet

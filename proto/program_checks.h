// Checks of a kernel program that need no device, in one place for the two that make them: the agent, which refuses
// such a program as malformed, and `tunefleet measure --program`, which says so in one line before a device is
// leased.
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <cmath>
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

}  // namespace tunefleet

// Small kernel programs shared by the agent's process-level tests.
#pragma once

#include <string>

#include "proto/tunefleet.pb.h"

namespace tunefleet::agent {

// "c[i] = a[i] + b[i]" over `n` floats with a reference; `extra_source` is appended to the kernel source (e.g. the
// fault marker comment).
inline proto::KernelProgram TestVectorAdd(int n = 64, const std::string& extra_source = "") {
  const std::string kernel =
      "__kernel void add(__global const float* a, __global const float* b, __global float* c) {\n"
      "  int i = get_global_id(0); c[i] = a[i] + b[i];\n}\n";
  proto::KernelProgram program;
  for (const char* name : {"a", "b", "c"}) {
    proto::BufferSpec* buffer = program.add_buffers();
    buffer->set_name(name);
    buffer->set_count(n);
    if (name[0] != 'c') {
      buffer->set_init(proto::BufferSpec::RANDOM);
      buffer->set_seed(name[0]);
      buffer->set_lo(0);
      buffer->set_hi(1);
    }
  }
  proto::KernelLaunch* launch = program.add_launches();
  launch->set_source(kernel + extra_source);
  launch->set_entry("add");
  for (const char* name : {"a", "b", "c"}) launch->add_args()->set_buffer(name);
  launch->add_global_size(n);
  program.set_output_buffer("c");
  program.mutable_timing()->set_repeat(1);
  return program;
}

}  // namespace tunefleet::agent

// tunefleet-agent: see agent/agent_main.h.
#include "agent/agent_main.h"
#include "common/file_size_signal.h"
#include "common/standard_streams.h"

int main(int argc, char** argv) {
  tunefleet::OpenMissingStandardStreams();  // before anything opens a file
  tunefleet::IgnoreFileSizeLimitSignal();
  return tunefleet::agent::AgentMain(argc, argv);
}

// tunefleet-agent: see agent/agent_main.h.
#include "agent/agent_main.h"

int main(int argc, char** argv) { return tunefleet::agent::AgentMain(argc, argv); }

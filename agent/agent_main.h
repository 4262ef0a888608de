// The tunefleet-agent command line (see --help). main() only calls AgentMain.
// Exit codes: 0 clean stop (SIGINT/SIGTERM) or --list-devices/--version/--help; 1 bad usage or OpenCL/device
// unavailable; 2 the tracker rejected the token.
#pragma once

namespace tunefleet::agent {

int AgentMain(int argc, char** argv);

}  // namespace tunefleet::agent

// Package sim holds what the simulators share: local stand-ins for the
// providers' HTTP APIs, reached by the real SDK clients through endpoint
// overrides (make dev and tests). Everything they produce is simulated and
// says so: no model is ever called. The simulators live by provider in
// sim/bedrock, sim/anthropic, sim/sagemaker and sim/s3vectors; this package
// holds their one lifecycle (Simulator), the HTTP listener and wire helpers,
// and the Claude message and media rules both Claude simulators read.
package sim

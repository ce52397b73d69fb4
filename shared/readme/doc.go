// Package readme holds the checks that the repo's READMEs promise only what
// the repo has: make targets and their variables, environment variables,
// make dev's flags, CDK context keys, files, links, named tests and
// benchmarks, and the Go identifiers they name (readme_test.go). What a
// README promises about the tools is checked beside the tools
// (shared/app/local/readme_test.go), the stack's outputs and alarms in
// infra (readme_test.go there).
package readme

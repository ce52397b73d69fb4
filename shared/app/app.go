// Package app is the composition root: it wires adapters (AWS or local
// stand-ins) into the service for the Lambdas and for make dev.
//
// In IAM auth mode the owner of a job is the caller's IAM principal, except that
// an assumed-role session (arn:aws:sts::<acct>:assumed-role/<Role>/<session>) is
// owned by its role, arn:aws:iam::<acct>:role/<Role>: the session name is the
// caller's choice and changes per credential refresh. The STS ARN has no role
// path, so the owner omits it too.
package app

// Version is stamped by the linker in release builds.
var Version = "dev"

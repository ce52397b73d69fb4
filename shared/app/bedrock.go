// Package app is the composition root: it wires adapters (AWS or local
// stand-ins) into the service for the Lambdas and for make dev.
//
// In IAM auth mode the owner of a job is the caller's IAM principal, except that
// an assumed-role session (arn:aws:sts::<acct>:assumed-role/<Role>/<session>) is
// owned by its role, arn:aws:iam::<acct>:role/<Role>: the session name is the
// caller's choice and changes per credential refresh. The STS ARN has no role
// path, so the owner omits it too.
package app

import (
	"context"
	"errors"
	"path"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Version is stamped by the linker in release builds.
var Version = "dev"

// BedrockProvider adapts the Bedrock client to the service's BatchProvider port.
type BedrockProvider struct {
	Client  *bedrock.Client
	RoleARN string
}

var _ service.BatchProvider = (*BedrockProvider)(nil)

// Submit starts one Bedrock batch job.
func (b *BedrockProvider) Submit(ctx context.Context, in service.BatchSubmit) (string, error) {
	arn, err := b.Client.Submit(ctx, bedrock.SubmitInput{
		JobName: in.Name, ClientRequestToken: in.ClientToken, ModelID: in.Model, RoleARN: b.RoleARN,
		InputURI: in.InputURI, OutputURI: in.OutputURI, TimeoutHours: in.TimeoutHrs, Tags: in.Tags,
	})
	if errors.Is(err, bedrock.ErrQuotaExceeded) {
		return "", errors.Join(service.ErrQuotaFull, err)
	}
	return arn, err
}

// Get reads a Bedrock job's state.
func (b *BedrockProvider) Get(ctx context.Context, ref string) (service.BatchState, error) {
	info, err := b.Client.Get(ctx, ref)
	if err != nil {
		return service.BatchState{}, err
	}
	return service.BatchState{Ref: info.ARN, Name: info.Name, Status: info.Status, Message: info.Message}, nil
}

// Stop stops a Bedrock job.
func (b *BedrockProvider) Stop(ctx context.Context, ref string) error { return b.Client.Stop(ctx, ref) }

// EncodeRecord renders one input line in the model's native format.
func (b *BedrockProvider) EncodeRecord(i int, model string, in job.Input, p job.Params) ([]byte, error) {
	return bedrock.EncodeRecordAt(i, model, in, p)
}

// ParseOutputLine parses one Bedrock output line.
func (b *BedrockProvider) ParseOutputLine(line []byte) (job.Record, error) {
	return bedrock.ParseOutputLine(line)
}

// OutputFiles is where Bedrock writes a part's results: <output>/<job id>/<input name>.out.
func (b *BedrockProvider) OutputFiles(p job.Part) ([]string, string) {
	prefix := bedrock.OutputPrefix(p.OutputURI, p.Ref)
	return []string{blob.Join(prefix, path.Base(p.InputURI)+".out")}, blob.Join(prefix, "manifest.json.out")
}

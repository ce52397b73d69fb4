package local

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
	simvectors "github.com/mcpbatch/mcpbatch/shared/sim/s3vectors"
	"github.com/mcpbatch/mcpbatch/shared/vectors"
)

// VectorBucket is the vector bucket of make dev (in the simulator).
const VectorBucket = "mcpbatch-local-vectors"

// Vectors is make dev's vector store: the S3 Vectors simulator behind the real
// SDK client (or Options.Adapters.Vectors, when set: then Sim is nil). The
// simulator keeps indexes in memory: they last as long as the process.
type Vectors struct {
	Sim   *simvectors.S3VectorsSim
	URL   string
	Index index.Index
	Sink  *vectors.Sink
}

// startVectors starts the S3 Vectors simulator and gives the graph its sink.
func (l *Suite) startVectors(ctx context.Context, o Options, records vectors.Records, blobs vectors.Blobs, d *graph.Deps) error {
	l.Vectors = &Vectors{}
	api := o.Adapters.Vectors
	if api == nil {
		vs := &simvectors.S3VectorsSim{Log: o.Log, Region: sim.DefaultRegion, Account: sim.DefaultAccount}
		url, err := vs.Listen("127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("start s3vectors simulator: %w", err)
		}
		l.started(vs)
		l.Vectors.Sim, l.Vectors.URL = vs, url
		api = s3vectors.NewFromConfig(aws.Config{
			Region:      sim.DefaultRegion,
			Credentials: credentials.NewStaticCredentialsProvider("simulated", "simulated", ""),
			HTTPClient:  sim.HTTPClient(),
		}, func(opts *s3vectors.Options) { opts.BaseEndpoint = aws.String(url) })
	}
	bucket := VectorBucket
	if o.Adapters.VectorBucket != "" {
		bucket = o.Adapters.VectorBucket
	}
	ix := index.NewS3Vectors(api, bucket)
	ix.CreateBucket = true // the simulator (or moto) starts empty
	l.Vectors.Index, l.Vectors.Sink = ix, &vectors.Sink{Index: ix, Records: records, Blobs: blobs, Log: o.Log}
	d.Vectors = l.Vectors.Sink
	return nil
}

// vectorTools are the index tools, embedding queries through the runtime
// simulator as the Lambdas do through Bedrock (nil: no vectors).
func (l *Suite) vectorTools(d graph.Deps) *vectors.Tools {
	if l.Vectors == nil {
		return nil
	}
	return &vectors.Tools{Index: l.Vectors.Index, Embed: d.OnDemandModel, ModelID: l.Service.Core.Models().OnDemandID}
}

// EmbeddingModels are the embedding models make dev allows besides the
// default models (in AWS an operator lists Cohere in MCPBATCH_BEDROCK_MODELS).
var EmbeddingModels = []string{"amazon.titan-embed-text-v2:0", "cohere.embed-english-v3", "cohere.embed-multilingual-v3",
	"cohere.embed-v4:0", "amazon.nova-2-multimodal-embeddings-v1:0"}

// QuirkModels are text models make dev allows besides the defaults because
// their Converse rules differ (Mistral 7B takes no system prompt).
var QuirkModels = []string{"mistral.mistral-7b-instruct-v0:2"}

// localModels are make dev's allowed Bedrock models: the defaults and the
// extras above, each with the us., eu. and global. profiles the catalog
// lists for it that the simulated account offers.
func localModels(acct *simbedrock.Account) []string {
	var base []string
	for _, m := range slices.Concat(config.DefaultBedrockBaseModels, EmbeddingModels, QuirkModels, AccountScenarioModels) {
		if !slices.Contains(base, m) {
			base = append(base, m)
		}
	}
	return model.Default().WithProfiles(base, acct.OffersProfile)
}

// wireCorpus lets corpus pipelines delete the vectors of deleted documents.
func (l *Suite) wireCorpus() {
	if l.Vectors != nil && l.Reports != nil && l.Reports.Runner != nil {
		l.Reports.Runner.Vectors = l.Vectors.Index
	}
}

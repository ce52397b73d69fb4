package config

// Detail types and environment of on-demand runs and report pipelines.
const (
	// DetailOnDemandRun asks the on-demand runner to start or continue a job.
	DetailOnDemandRun = "On-Demand Run Requested"
	// DetailPipelineTick is a scheduled (or by-hand) run of a report pipeline.
	DetailPipelineTick = "Pipeline Run Requested"

	EnvPipelinesFile = "MCPBATCH_PIPELINES_FILE"
	EnvReportTopic   = "MCPBATCH_REPORT_TOPIC"
	// EnvLinkSigner names the Secrets Manager secret holding the access key
	// ({"access_key_id", "secret_access_key"}) report links are signed with, so
	// they work their whole 7 days (unset: the function's role signs them, and a
	// notification says how long its link really works).
	EnvLinkSigner = "MCPBATCH_LINK_SIGNER_SECRET"
	// DefaultPipelinesFile is the pipeline configuration, deployed beside the
	// nightly-report bootstrap and read from the checkout in make dev.
	DefaultPipelinesFile = "infra/pipelines/pipelines.json"
)

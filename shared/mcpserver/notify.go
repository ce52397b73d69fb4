package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// NotifyIn is the notify argument of the submitting tools.
type NotifyIn struct {
	Webhook string `json:"webhook,omitempty" jsonschema:"https URL POSTed once per terminal state with the job summary, signed with your own secret (get_webhook_secret; X-Mcpbatch-Signature: HMAC-SHA256 over timestamp, owner, this URL and the body); at most 2,048 characters, no private or loopback addresses"`
	SNS     bool   `json:"sns,omitempty" jsonschema:"also publish the summary to this stack's notification topic"`
}

// NotifyChecker checks notification settings at submit time.
type NotifyChecker interface {
	CheckNotify(ctx context.Context, n job.Notify) error
}

// checkNotify validates in (nil: none asked) into what the job stores.
func (s *Server) checkNotify(ctx context.Context, in *NotifyIn) (*job.Notify, error) {
	if in == nil || (in.Webhook == "" && !in.SNS) {
		return nil, nil
	}
	if s.Notify == nil {
		return nil, job.Fieldf("notify", "this deployment sends no completion notifications; poll get_job instead")
	}
	n := job.Notify{Webhook: in.Webhook, SNS: in.SNS}
	if err := s.Notify.CheckNotify(ctx, n); err != nil {
		return nil, err
	}
	return &n, nil
}

// WebhookSecrets gives each owner the secret its receivers verify with (the
// announce service; NotifyChecker values that implement it serve
// get_webhook_secret).
type WebhookSecrets interface {
	WebhookSecret(ctx context.Context, owner string) (current string, previous []string, err error)
}

// WebhookSecretIn takes nothing: the caller's identity decides the secret.
type WebhookSecretIn struct{}

// WebhookSecretOut is the caller's webhook verifying secret.
type WebhookSecretOut struct {
	Owner    string   `json:"owner" jsonschema:"your owner identity, sent as X-Mcpbatch-Owner and signed"`
	Secret   string   `json:"secret" jsonschema:"the HMAC-SHA256 key your receivers verify X-Mcpbatch-Signature with"`
	Previous []string `json:"previous,omitempty" jsonschema:"earlier secrets still signed with while the deployment rotates its signing secret"`
	Signed   string   `json:"signed" jsonschema:"what each v1= value is the hex HMAC of"`
}

func (s *Server) webhookSecrets() WebhookSecrets {
	ws, _ := s.Notify.(WebhookSecrets)
	return ws
}

func (s *Server) addWebhookSecretTool(srv *mcp.Server) {
	no := false
	addTool(srv, &mcp.Tool{
		Name:  "get_webhook_secret",
		Title: "Get your webhook verifying secret",
		Description: "The secret your webhook receivers verify notify.webhook deliveries with: yours only (another owner's deliveries do not verify with it). " +
			"Each X-Mcpbatch-Signature v1= value is hex(HMAC-SHA256(secret, timestamp + \"\\n\" + owner + \"\\n\" + webhook URL as submitted + \"\\n\" + raw body)); " +
			"refuse timestamps more than 5 minutes away.",
		Annotations: &mcp.ToolAnnotations{Title: "Get webhook secret", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, s.webhookSecret)
}

func (s *Server) webhookSecret(ctx context.Context, req *mcp.CallToolRequest, _ WebhookSecretIn) (*mcp.CallToolResult, WebhookSecretOut, error) {
	return call(s, ctx, req, "get_webhook_secret", "", func(owner string) (WebhookSecretOut, string, string, error) {
		cur, prev, err := s.webhookSecrets().WebhookSecret(ctx, owner)
		if err != nil {
			return WebhookSecretOut{}, "", "", err
		}
		return WebhookSecretOut{Owner: owner, Secret: cur, Previous: prev, Signed: "<X-Mcpbatch-Timestamp>\\n<owner>\\n<webhook URL>\\n<raw body>"},
			"Your webhook verifying secret is in structuredContent.secret; keep it out of logs.", "", nil
	})
}

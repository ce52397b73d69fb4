package local

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/notify"
	"github.com/mcpbatch/mcpbatch/shared/service/announce"
)

// LocalTopic is the notification topic's name in make dev (SNS messages go to
// notifications.jsonl under the data folder).
const LocalTopic = "local:mcpbatch-notifications"

// WebhookSecretFile is where make dev keeps the master webhook signing
// secret (under the data folder, mode 0600). Receivers verify with their
// owner's secret (get_webhook_secret, or notify.OwnerSecret of this one).
const WebhookSecretFile = "webhook-secret"

// WebhookSecret returns make dev's master webhook signing secret, generating
// it on first use. The file holds exactly the secret, no newline, so
// `cat` or a read of the whole file gives it as is.
func WebhookSecret(dir string) ([]byte, error) {
	path := filepath.Join(dir, WebhookSecretFile)
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) >= notify.MinKeyLen {
		return []byte(strings.TrimSpace(string(b))), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read webhook secret: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	secret := hex.EncodeToString(raw[:])
	if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
		return nil, fmt.Errorf("write webhook secret: %w", err)
	}
	return []byte(secret), nil
}

// addAnnounce delivers completion notifications for real: webhooks to public
// addresses and loopback (loopback never in AWS; other private addresses
// nowhere), SNS messages to the notifications file.
// nightly-report's handler consumes "Job Completed" for it, as in AWS (routeEvents).
func (l *Suite) addAnnounce(o Options) error {
	secret, err := WebhookSecret(o.Dir)
	if err != nil {
		return err
	}
	l.Announce = &announce.Service{Jobs: l.store, Log: o.Log,
		Webhooks: &notify.Webhook{Keys: notify.StaticKeys{secret}, AllowLoopback: true, Backoff: o.WebhookBackoff},
		Topic:    l.Reports.Notifier, TopicARN: LocalTopic}
	if o.Adapters.TopicARN != "" {
		l.Announce.TopicARN = o.Adapters.TopicARN
	}
	return nil
}

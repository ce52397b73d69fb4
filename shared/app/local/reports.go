package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrockrt"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

// ReportsOptions configure on-demand runs and report pipelines in make dev.
type ReportsOptions struct {
	// PipelinesFile is the pipelines config (default infra/pipelines/pipelines.json;
	// a missing default file means no pipelines).
	PipelinesFile string
	// Pipelines, when set, is used instead of the file (tests).
	Pipelines *pipeline.Config
	// SourceRoot is where relative local_dir paths start (default: the working directory).
	SourceRoot string
	// ThrottleRate and Latency are the runtime simulator's knobs.
	ThrottleRate float64
	// FlexThrottleRate throttles only calls on the flex service tier.
	FlexThrottleRate float64
	Latency          time.Duration
	// Concurrency bounds on-demand calls per run (default job.DefaultOnDemandConcurrency).
	Concurrency int
}

// Reports is the on-demand and pipeline part of the local suite.
type Reports struct {
	Runtime    *simbedrock.RuntimeSim
	RuntimeURL string
	Runner     *pipeline.Runner
	// Notifier is the notifications file, or Options.Adapters.Topic when set.
	Notifier Topic
}

// startRuntime starts the Bedrock runtime simulator and gives d the on-demand
// runner's model over it.
func (l *Suite) startRuntime(o Options, d *graph.Deps) error {
	ro := o.Reports
	l.Reports = &Reports{Runtime: &simbedrock.RuntimeSim{ThrottleRate: ro.ThrottleRate, FlexThrottleRate: ro.FlexThrottleRate, Latency: ro.Latency, Log: o.Log,
		Violations: l.Sim.Violations}}
	url, err := l.Reports.Runtime.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	l.started(l.Reports.Runtime)
	l.Reports.RuntimeURL = url
	client := bedrockruntime.NewFromConfig(aws.Config{
		Region:      sim.DefaultRegion,
		Credentials: credentials.NewStaticCredentialsProvider("simulated", "simulated", ""),
		HTTPClient:  sim.HTTPClient(),
	}, func(opts *bedrockruntime.Options) { opts.BaseEndpoint = aws.String(url) }, bedrockrt.NoSDKRetries)
	d.OnDemandModel = &bedrockrt.Model{Client: client}
	d.OnDemandConcurrency = ro.Concurrency
	return nil
}

// addReports builds the report pipelines' runner (routeEvents routes their events).
func (l *Suite) addReports(o Options) error {
	ro := o.Reports
	r := l.Reports
	var err error

	cfg := ro.Pipelines
	if cfg == nil {
		file := ro.PipelinesFile
		if file == "" {
			file = config.DefaultPipelinesFile
		}
		if cfg, err = pipeline.Load(file); err != nil {
			if ro.PipelinesFile != "" || !os.IsNotExist(unwrapAll(err)) {
				return fmt.Errorf("pipelines: %w", err)
			}
			cfg = &pipeline.Config{}
		}
	}
	r.Notifier = &FileNotifier{Path: filepath.Join(o.Dir, "notifications.jsonl"), Log: o.Log}
	if o.Adapters.Topic != nil {
		r.Notifier = o.Adapters.Topic
	}
	blobs := l.Blobs
	root := ro.SourceRoot
	r.Runner = &pipeline.Runner{
		Config: cfg, Svc: l.Service.Batch, Jobs: l.store, Blobs: blobs, Bus: l.Bus, Notify: r.Notifier,
		Bucket: Bucket, TopicARN: reportTopic(o), Log: o.Log,
		SourceFor: func(p *pipeline.Pipeline, date string) (pipeline.Source, error) {
			if p.Source.LocalDir != "" {
				dir := pipeline.Expand(p.Source.LocalDir, Bucket, date)
				if !filepath.IsAbs(dir) && root != "" {
					dir = filepath.Join(root, dir)
				}
				return pipeline.DirSource{Dir: dir}, nil
			}
			return pipeline.BlobSource{Blobs: blobs, Prefix: pipeline.Expand(p.Source.S3Prefix, Bucket, date)}, nil
		},
	}
	return nil
}

// reportTopic is the topic pipelines notify when their config names none: in
// AWS the one notification topic (config.EnvReportTopic) serves reports and
// job notifications alike.
func reportTopic(o Options) string {
	if o.Adapters.TopicARN != "" {
		return o.Adapters.TopicARN
	}
	return fmt.Sprintf("arn:aws:sns:%s:%s:mcpbatch-local-reports", sim.DefaultRegion, sim.DefaultAccount)
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// FileNotifier stands in for SNS in make dev: every notification is appended to a
// JSON-lines file and logged, so a developer sees what subscribers would get.
type FileNotifier struct {
	Path string
	Log  *slog.Logger
	mu   sync.Mutex
}

// Notification is one line of the notifications file.
type Notification struct {
	Topic   string `json:"topic"`
	Subject string `json:"subject"`
	Message string `json:"message"`
	// Attributes are the SNS message attributes (owner on job notifications).
	Attributes map[string]string `json:"attributes,omitempty"`
	Time       string            `json:"time"`
}

// Notify appends the notification.
func (n *FileNotifier) Notify(ctx context.Context, topic, subject, message string) error {
	return n.write(ctx, Notification{Topic: topic, Subject: subject, Message: message})
}

// NotifyOwner appends a notification of owner's, with the owner attribute SNS would carry.
func (n *FileNotifier) NotifyOwner(ctx context.Context, topic, owner, subject, message string) error {
	return n.write(ctx, Notification{Topic: topic, Subject: subject, Message: message, Attributes: map[string]string{"owner": owner}})
}

func (n *FileNotifier) write(ctx context.Context, note Notification) error {
	topic, subject := note.Topic, note.Subject
	note.Time = time.Now().UTC().Format(time.RFC3339)
	n.mu.Lock()
	defer n.mu.Unlock()
	f, err := os.OpenFile(n.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open notifications file: %w", err)
	}
	defer f.Close()
	if err := json.NewEncoder(f).Encode(note); err != nil {
		return fmt.Errorf("write notification: %w", err)
	}
	if n.Log != nil {
		n.Log.InfoContext(ctx, "notification (local stand-in for SNS)", "topic", topic, "subject", subject, "file", n.Path)
	}
	return nil
}

// Read returns the notifications sent so far.
func (n *FileNotifier) Read() ([]Notification, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	raw, err := os.ReadFile(n.Path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Notification
	dec := json.NewDecoder(bytes.NewReader(raw))
	for dec.More() {
		var x Notification
		if err := dec.Decode(&x); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

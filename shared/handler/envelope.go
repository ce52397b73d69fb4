package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// envelope is an EventBridge event with its time kept as text. The envelope's
// time and the dates inside a detail may come in forms other than RFC 3339
// (the AWS documentation's own samples do, e.g. "Aug 28, 2024, 10:47:53 PM"),
// and decoding into events.CloudWatchEvent would fail on them: no handler may
// depend on parsing them.
type envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	AccountID  string          `json:"account"`
	Time       json.RawMessage `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// DecodeEvent reads an EventBridge event whatever form its time has; Time is
// set only when it is RFC 3339.
func DecodeEvent(raw []byte) (events.CloudWatchEvent, error) {
	var e envelope
	if err := json.Unmarshal(raw, &e); err != nil {
		return events.CloudWatchEvent{}, fmt.Errorf("not an EventBridge event: %w", err)
	}
	ev := events.CloudWatchEvent{Version: e.Version, ID: e.ID, DetailType: e.DetailType, Source: e.Source,
		AccountID: e.AccountID, Region: e.Region, Resources: e.Resources, Detail: e.Detail}
	var s string
	if json.Unmarshal(e.Time, &s) == nil {
		ev.Time, _ = time.Parse(time.RFC3339, s)
	}
	return ev, nil
}

// Tolerant adapts an EventBridge handler to the raw payload, decoding it with
// DecodeEvent, for lambda.Start.
func Tolerant(h func(context.Context, events.CloudWatchEvent) error) func(context.Context, json.RawMessage) error {
	return func(ctx context.Context, raw json.RawMessage) error {
		ev, err := DecodeEvent(raw)
		if err != nil {
			return err
		}
		return h(ctx, ev)
	}
}

// TolerantResult is Tolerant for handlers that also return a result.
func TolerantResult[R any](h func(context.Context, events.CloudWatchEvent) (R, error)) func(context.Context, json.RawMessage) (R, error) {
	return func(ctx context.Context, raw json.RawMessage) (R, error) {
		ev, err := DecodeEvent(raw)
		if err != nil {
			var zero R
			return zero, err
		}
		return h(ctx, ev)
	}
}

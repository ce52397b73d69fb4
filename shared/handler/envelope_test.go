package handler

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The envelope's time in forms other than RFC 3339 (as in AWS's own samples)
// must not stop an event; events.CloudWatchEvent alone refuses them.
func TestDecodeEventToleratesTimeForms(t *testing.T) {
	for _, tc := range []struct {
		time     string
		wantTime bool
	}{
		{`"2025-11-29T13:58:16Z"`, true},
		{`"Aug 28, 2024, 10:47:53 PM"`, false},
		{`"2025-11-29 12:21:07"`, false},
		{`1732888696`, false},
		{`null`, false},
	} {
		raw := []byte(`{"version":"0","id":"x","detail-type":"Batch Inference Job State Change","source":"aws.bedrock","account":"1","time":` +
			tc.time + `,"region":"us-east-1","resources":[],"detail":{"status":"Completed"}}`)
		ev, err := DecodeEvent(raw)
		if err != nil || ev.Source != "aws.bedrock" || string(ev.Detail) != `{"status":"Completed"}` || ev.Time.IsZero() == tc.wantTime {
			t.Errorf("time %s: %+v, %v", tc.time, ev, err)
		}
		if !tc.wantTime {
			var strict events.CloudWatchEvent
			if json.Unmarshal(raw, &strict) == nil && tc.time != `null` {
				t.Errorf("time %s: the strict decoder accepts it, so this case proves nothing", tc.time)
			}
		}
	}
}

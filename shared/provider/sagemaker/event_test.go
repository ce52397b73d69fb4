package sagemaker

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestParseSamples parses the SNS message of every sample in events/sagemaker and
// compares the decoded event with testdata/<sample>.golden.
func TestParseSamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "events", "sagemaker", "*.json"))
	if err != nil || len(files) != 5 {
		t.Fatalf("want the five SageMaker samples, got %v (%v)", files, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var ev events.SNSEvent
			if err := json.Unmarshal(raw, &ev); err != nil || len(ev.Records) != 1 {
				t.Fatalf("not an SNS event with one record: %v", err)
			}
			got, err := ParseNotification([]byte(ev.Records[0].SNS.Message))
			if name == "test-notification" {
				if !errors.Is(err, ErrTestNotification) {
					t.Fatalf("want ErrTestNotification, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, _ := json.MarshalIndent(struct {
				InferenceID, Status, FailureReason, OutputLocation, ContentType string
				Body                                                            string
				HasBody                                                         bool
			}{got.InferenceID, got.Status, got.FailureReason, got.OutputLocation, got.ContentType, string(got.Body), got.HasBody}, "", "  ")
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, append(out, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if strings.TrimSpace(string(want)) != string(out) {
				t.Fatalf("parsed\n%s\nwant\n%s", out, want)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, msg, want string
	}{
		{"not JSON", `{`, "not JSON"},
		{"other source", `{"eventSource":"aws:s3","eventName":"InferenceResult","inferenceId":"x","invocationStatus":"Completed"}`, "not a SageMaker inference result"},
		{"no inference id", `{"eventSource":"aws:sagemaker","eventName":"InferenceResult","invocationStatus":"Completed"}`, "without inferenceId"},
		{"completed without response parameters", `{"eventSource":"aws:sagemaker","eventName":"InferenceResult","inferenceId":"x","invocationStatus":"Completed"}`, "without responseParameters"},
		{"completed with nothing to read", `{"eventSource":"aws:sagemaker","eventName":"InferenceResult","inferenceId":"x","invocationStatus":"Completed","responseParameters":{"contentType":"text/plain"}}`, "neither responseBody nor outputLocation"},
		{"bad base64", `{"eventSource":"aws:sagemaker","eventName":"InferenceResult","inferenceId":"x","invocationStatus":"Completed","responseParameters":{},"responseBody":{"content":"%%","encoding":"BASE64"}}`, "not"},
		{"unknown status", `{"eventSource":"aws:sagemaker","eventName":"InferenceResult","inferenceId":"x","invocationStatus":"Pending"}`, "unknown invocationStatus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseNotification([]byte(tc.msg))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestDecodeBody(t *testing.T) {
	tests := []struct {
		content, encoding, want string
		wantErr                 bool
	}{
		{"aGVsbG8=", "BASE64", "hello", false},
		{"aGVsbG8=", "base64", "hello", false},
		{"aGVsbG8=", "", "hello", false},
		{"plain text!", "", "plain text!", false},
		{"plain text!", "UTF-8", "plain text!", false},
		{"plain text!", "BASE64", "", true},
	}
	for _, tc := range tests {
		got, err := decodeBody(tc.content, tc.encoding)
		if (err != nil) != tc.wantErr || string(got) != tc.want {
			t.Errorf("decodeBody(%q, %q) = %q, %v", tc.content, tc.encoding, got, err)
		}
	}
}

package sim

// Wire helpers every simulator answers with: the AWS error and JSON shapes,
// epoch times and page tokens.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The simulated account and Region every simulator stands for by default.
const (
	DefaultAccount = "123456789012"
	DefaultRegion  = "us-east-1"
)

// JSONError answers in the AWS JSON 1.1 error shape: 400 with __type and message.
func JSONError(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError answers in the REST-JSON error shape the SDK decodes: the type in
// X-Amzn-ErrorType and {"message": ...} in the body.
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("X-Amzn-ErrorType", code)
	WriteJSON(w, status, map[string]string{"message": msg})
}

// Epoch is a time in the AWS JSON epoch-seconds form.
func Epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// PageToken is a page token within the documented NextToken pattern
// ^[a-zA-Z0-9/+]*={0,2}$ (Service Quotas) that also fits Bedrock's.
func PageToken(n int) string { return "simpage" + strconv.Itoa(n) }

// PageStart is where the page that tok names starts among n items.
func PageStart(tok string, n int) (int, error) {
	if tok == "" {
		return 0, nil
	}
	s, ok := strings.CutPrefix(tok, "simpage")
	i, err := strconv.Atoi(s)
	if !ok || err != nil || i < 0 || i > n {
		return 0, fmt.Errorf("bad token %q", tok)
	}
	return i, nil
}

package bedrock

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// QuotasSim simulates the Service Quotas API (AWS JSON 1.1) for
// ListServiceQuotas of service code "bedrock", from the simulated account's
// table (account.go). Every other operation or service code is refused as
// the service would refuse it.
type QuotasSim struct {
	// Account is the table the quotas come from (shared with the BedrockSim).
	Account *Account
	Log     *slog.Logger
	http    sim.Listener
}

// Listen serves the simulator on addr until Close and returns its base URL.
func (q *QuotasSim) Listen(addr string) (string, error) {
	log := q.Log
	if log == nil {
		log = slog.Default()
	}
	return q.http.Listen(addr, "service quotas sim", q, log, "Service Quotas SIMULATOR listening: quotas of the simulated account")
}

// Close stops the listener.
func (q *QuotasSim) Close() error { return q.http.Close() }

// Settle: Service Quotas answers every call before returning (Simulator).
func (q *QuotasSim) Settle(ctx context.Context) error { return sim.Settled(ctx) }

func (q *QuotasSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, done := sim.BodyFirst(w, r)
	defer done()
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "ServiceQuotasV20190624.ListServiceQuotas" {
		sim.JSONError(w, "UnknownOperationException", "SIMULATED: the Service Quotas simulator implements ListServiceQuotas only")
		return
	}
	var in struct {
		ServiceCode string
		NextToken   string
		MaxResults  *int
		QuotaCode   string
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil {
		sim.JSONError(w, "IllegalArgumentException", "SIMULATED: the request body is not JSON")
		return
	}
	if in.ServiceCode == "" {
		sim.JSONError(w, "IllegalArgumentException", "SIMULATED: ServiceCode is required")
		return
	}
	if in.ServiceCode != "bedrock" {
		sim.JSONError(w, "NoSuchResourceException", "SIMULATED: the simulated account has quotas for service code bedrock only")
		return
	}
	limit := 100
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > 100 {
			sim.JSONError(w, "IllegalArgumentException", "SIMULATED: MaxResults must be 1..100")
			return
		}
		limit = *in.MaxResults
	}
	q.Account.count("ListServiceQuotas")
	rows := q.Account.quotaRows()
	if in.QuotaCode != "" {
		var keep []map[string]any
		for _, r := range rows {
			if r["QuotaCode"] == in.QuotaCode {
				keep = append(keep, r)
			}
		}
		rows = keep
	}
	start, err := sim.PageStart(in.NextToken, len(rows))
	if err != nil {
		sim.JSONError(w, "InvalidPaginationTokenException", "SIMULATED: invalid NextToken")
		return
	}
	end := min(start+limit, len(rows))
	out := map[string]any{"Quotas": rows[start:end]}
	if end < len(rows) {
		out["NextToken"] = sim.PageToken(end)
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

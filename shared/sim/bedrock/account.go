package bedrock

// The simulated account's model facts: what Bedrock's control plane
// (ListFoundationModels, GetFoundationModelAvailability,
// ListInferenceProfiles) and Service Quotas (service code "bedrock") answer
// about models. The table is the simulators' own, never the product's: the
// product reads it through the real SDK clients and must merge it right.
//
// Wire shapes follow the Bedrock and Service Quotas API references
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ListFoundationModels.html,
// API_GetFoundationModelAvailability.html, API_ListInferenceProfiles.html;
// https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_ListServiceQuotas.html),
// checked 2026-11-30. Choices where they are loose:
//   - modelLifecycle.status is ACTIVE or LEGACY; a model past its
//     endOfLifeTime is still listed (LEGACY, with the past date), so a
//     client must read the date, not only the status.
//   - inferenceTypesSupported carries INFERENCE_PROFILE for profile-only
//     models, a value older SDK enums lack.
//   - ListInferenceProfiles pages by maxResults (1..1000) and nextToken.
//   - ListServiceQuotas pages by MaxResults (1..100, default 100); an unknown
//     ServiceCode is NoSuchResourceException.
//   - Quota names put the model last ("... for <model>") except for models
//     marked quotaModelFirst ("<model> batch inference job size (in GB)"), as
//     the console shows for some models.

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// AccountModel is one foundation model of the simulated account.
type AccountModel struct {
	ID, Name, Provider string
	// Status is ACTIVE or LEGACY; Legacy and EndOfLife are its dates (zero: none).
	Status            string
	Legacy, EndOfLife time.Time
	InferenceTypes    []string // ON_DEMAND, PROVISIONED, INFERENCE_PROFILE
	Input, Output     []string // TEXT, IMAGE, DOCUMENT, EMBEDDING, ...
	// Authorized and Agreement are GetFoundationModelAvailability's
	// authorizationStatus (AUTHORIZED or NOT_AUTHORIZED) and agreement status.
	Authorized bool
	Agreement  string
	// Profiles are the geographies of the system-defined profiles
	// ("us", "global", ...) offered in the simulated Region.
	Profiles []string
	// Batch are its batch-inference quotas (nil: batch inference does not serve it).
	Batch *BatchQuotas
	// QuotaName is the model's name in its on-demand rate quotas, BatchName
	// in its batch quotas (both default to Name); QuotaModelFirst puts it
	// first in the batch quotas. Service Quotas names models its own way:
	// "Nova Lite V1" (L-19E52681), "Qwen3 235B" on the batch quotas and
	// "Qwen3 235B a22b 2507 V1" on the rates (L-94612705, L-3875BCCF),
	// "OpenAI GPT OSS 120b" (L-052AA08C), "DeepSeek v3" (L-CB18C933), as
	// https://console.aws.amazon.com/servicequotas/home/services/bedrock/quotas/<code> shows them (read 2026-12-03).
	QuotaName, BatchName string
	QuotaModelFirst      bool
}

// BatchQuotas are one model's batch-inference quotas.
type BatchQuotas struct {
	MinRecords, MaxRecords, MaxRecordsPerFile int
	FileGB, JobGB                             float64
	Concurrent                                int
}

// defaultBatch are the documented default quotas (see models.go).
func defaultBatch() *BatchQuotas {
	return &BatchQuotas{MinRecords: batchMinRecords, MaxRecords: batchMaxRecordsPerJob, MaxRecordsPerFile: batchMaxRecordsPerFile,
		FileGB: 1, JobGB: 5, Concurrent: DefaultMaxJobsPerModel}
}

// Account is the simulated account's table, shared by the Bedrock and Service
// Quotas simulators. Safe for concurrent use; tests change rows with Update.
type Account struct {
	mu       sync.RWMutex
	models   []AccountModel
	apps     []appProfile
	calls    map[string]int
	region   string
	account  string
	appCount int
}

type appProfile struct{ id, name, model string }

// NewAccount returns the make dev account: the listed rows of the
// simulators' model table (bedrock_models.go, which names the sources of its
// dates), in its order, plus one application inference profile.
func NewAccount() *Account {
	var ms []AccountModel
	for _, m := range bedrockCatalog {
		if m.listed != nil {
			ms = append(ms, m.accountModel(sim.DefaultRegion))
		}
	}
	a := &Account{models: ms, calls: map[string]int{}, region: sim.DefaultRegion, account: sim.DefaultAccount}
	a.apps = []appProfile{{id: "simapp0000001", name: "team-a-haiku", model: "anthropic.claude-haiku-4-5-20251001-v1:0"}}
	return a
}

// SyntheticAccount is an account of n text models (every fifth legacy, every
// seventh without access, each with a us. and global. profile and batch
// quotas), for benchmarks of a large account.
func SyntheticAccount(n int) *Account {
	a := &Account{calls: map[string]int{}, region: sim.DefaultRegion, account: sim.DefaultAccount}
	for i := range n {
		m := AccountModel{ID: fmt.Sprintf("sim.model-%03d-v1:0", i), Name: fmt.Sprintf("Sim Model %03d", i), Provider: "Simulated",
			Status: "ACTIVE", InferenceTypes: []string{"ON_DEMAND", "INFERENCE_PROFILE"}, Input: []string{"TEXT", "IMAGE"}, Output: []string{"TEXT"},
			Authorized: i%7 != 0, Agreement: "AVAILABLE", Profiles: []string{"us", "global"}, Batch: defaultBatch(), QuotaModelFirst: i%3 == 0}
		if i%5 == 0 {
			m.Status, m.Legacy, m.EndOfLife = "LEGACY", time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
		}
		a.models = append(a.models, m)
	}
	return a
}

// Models lists the account's model ids.
func (a *Account) Models() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var ids []string
	for _, m := range a.models {
		ids = append(ids, m.ID)
	}
	return ids
}

// OffersProfile reports whether the account's Region offers the
// system-defined inference profile id ("us.<model id>", ...).
func (a *Account) OffersProfile(id string) bool {
	geo, base, ok := strings.Cut(id, ".")
	if !ok {
		return false
	}
	m, ok := a.lookup(base)
	return ok && slices.Contains(m.Profiles, geo)
}

// Update changes the row of id (tests: move a quota, revoke access).
func (a *Account) Update(id string, fn func(*AccountModel)) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.models {
		if a.models[i].ID == id {
			fn(&a.models[i])
			return true
		}
	}
	return false
}

// Calls counts the control-plane calls answered, by operation.
func (a *Account) Calls(op string) int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.calls[op]
}

func (a *Account) count(op string) {
	a.mu.Lock()
	a.calls[op]++
	a.mu.Unlock()
}

func (a *Account) lookup(id string) (AccountModel, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	for _, m := range a.models {
		if m.ID == id {
			return m, true
		}
	}
	return AccountModel{}, false
}

// batchQuotas are the model's batch quotas (nil: none).
func (a *Account) batchQuotas(id string) *BatchQuotas {
	m, ok := a.lookup(id)
	if !ok || m.Batch == nil {
		return nil
	}
	q := *m.Batch
	return &q
}

func isoTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// listFoundationModels answers GET /foundation-models (filters byProvider,
// byOutputModality, byInferenceType as documented).
func (a *Account) listFoundationModels(w http.ResponseWriter, r *http.Request) {
	a.count("ListFoundationModels")
	q := r.URL.Query()
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]map[string]any, 0, len(a.models))
	for _, m := range a.models {
		if p := q.Get("byProvider"); p != "" && !strings.EqualFold(p, m.Provider) {
			continue
		}
		if o := q.Get("byOutputModality"); o != "" && !slices.Contains(m.Output, o) {
			continue
		}
		if t := q.Get("byInferenceType"); t != "" && !slices.Contains(m.InferenceTypes, t) {
			continue
		}
		lc := map[string]any{"status": m.Status}
		for k, t := range map[string]time.Time{"legacyTime": m.Legacy, "endOfLifeTime": m.EndOfLife} {
			if v := isoTime(t); v != nil {
				lc[k] = v
			}
		}
		out = append(out, map[string]any{
			"modelArn":                   fmt.Sprintf("arn:aws:bedrock:%s::foundation-model/%s", a.region, m.ID),
			"modelId":                    m.ID,
			"modelName":                  m.Name,
			"providerName":               m.Provider,
			"inputModalities":            m.Input,
			"outputModalities":           m.Output,
			"responseStreamingSupported": slices.Contains(m.Output, "TEXT"),
			"customizationsSupported":    []string{},
			"inferenceTypesSupported":    m.InferenceTypes,
			"modelLifecycle":             lc,
		})
	}
	sim.WriteJSON(w, http.StatusOK, map[string]any{"modelSummaries": out})
}

// availability answers GET /foundation-model-availability/{modelId}.
func (a *Account) availability(w http.ResponseWriter, r *http.Request) {
	a.count("GetFoundationModelAvailability")
	id := r.PathValue("modelId")
	m, ok := a.lookup(id)
	if !ok {
		sim.WriteError(w, http.StatusNotFound, "ResourceNotFoundException", fmt.Sprintf("SIMULATED: the model %s does not exist in %s", id, a.region))
		return
	}
	auth := "NOT_AUTHORIZED"
	if m.Authorized {
		auth = "AUTHORIZED"
	}
	sim.WriteJSON(w, http.StatusOK, map[string]any{
		"modelId":                 m.ID,
		"agreementAvailability":   map[string]any{"status": m.Agreement},
		"authorizationStatus":     auth,
		"entitlementAvailability": "AVAILABLE",
		"regionAvailability":      "AVAILABLE",
	})
}

// profileRows are the account's inference profiles in the simulated Region.
func (a *Account) profileRows(typ string) []map[string]any {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var out []map[string]any
	created := "2025-01-01T00:00:00Z"
	if typ == "" || typ == "SYSTEM_DEFINED" {
		for _, m := range a.models {
			for _, g := range m.Profiles {
				id := g + "." + m.ID
				out = append(out, map[string]any{
					"inferenceProfileId":   id,
					"inferenceProfileArn":  fmt.Sprintf("arn:aws:bedrock:%s:%s:inference-profile/%s", a.region, a.account, id),
					"inferenceProfileName": strings.ToUpper(g) + " " + m.Name,
					"type":                 "SYSTEM_DEFINED", "status": "ACTIVE", "createdAt": created, "updatedAt": created,
					"models": []map[string]string{{"modelArn": fmt.Sprintf("arn:aws:bedrock:%s::foundation-model/%s", a.region, m.ID)}},
				})
			}
		}
	}
	if typ == "" || typ == "APPLICATION" {
		for _, p := range a.apps {
			out = append(out, map[string]any{
				"inferenceProfileId":   p.id,
				"inferenceProfileArn":  fmt.Sprintf("arn:aws:bedrock:%s:%s:application-inference-profile/%s", a.region, a.account, p.id),
				"inferenceProfileName": p.name,
				"type":                 "APPLICATION", "status": "ACTIVE", "createdAt": created, "updatedAt": created,
				"models": []map[string]string{{"modelArn": fmt.Sprintf("arn:aws:bedrock:%s::foundation-model/%s", a.region, p.model)}},
			})
		}
	}
	return out
}

// listInferenceProfiles answers GET /inference-profiles (type, maxResults 1..1000, nextToken).
func (a *Account) listInferenceProfiles(w http.ResponseWriter, r *http.Request) {
	a.count("ListInferenceProfiles")
	q := r.URL.Query()
	typ := q.Get("type")
	if typ != "" && typ != "SYSTEM_DEFINED" && typ != "APPLICATION" {
		sim.WriteError(w, http.StatusBadRequest, "ValidationException", "SIMULATED: type must be SYSTEM_DEFINED or APPLICATION")
		return
	}
	limit := 1000
	if s := q.Get("maxResults"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			sim.WriteError(w, http.StatusBadRequest, "ValidationException", "SIMULATED: maxResults must be 1..1000")
			return
		}
		limit = n
	}
	rows := a.profileRows(typ)
	start, err := sim.PageStart(q.Get("nextToken"), len(rows))
	if err != nil {
		sim.WriteError(w, http.StatusBadRequest, "ValidationException", "SIMULATED: invalid nextToken")
		return
	}
	end := min(start+limit, len(rows))
	body := map[string]any{"inferenceProfileSummaries": rows[start:end]}
	if end < len(rows) {
		body["nextToken"] = sim.PageToken(end)
	}
	sim.WriteJSON(w, http.StatusOK, body)
}

// The simulated account's on-demand rates per model (its own figures, the
// same for every model): what a deadline's timing reads.
const (
	simRequestsPerMinute = 200
	simTokensPerMinute   = 400_000
)

// quotaRows are the Service Quotas rows of service code bedrock: the batch
// quotas of every model that has them, plus an on-demand quota per model
// (which a client must skip).
func (a *Account) quotaRows() []map[string]any {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var out []map[string]any
	row := func(name string, value float64, unit string) {
		h := fnv.New32a()
		h.Write([]byte(name))
		code := fmt.Sprintf("L-%08X", h.Sum32())
		out = append(out, map[string]any{
			"ServiceCode": "bedrock", "ServiceName": "Amazon Bedrock", "QuotaCode": code, "QuotaName": name,
			"QuotaArn": fmt.Sprintf("arn:aws:servicequotas:%s:%s:bedrock/%s", a.region, a.account, code),
			"Value":    value, "Unit": unit, "Adjustable": true, "GlobalQuota": false,
		})
	}
	for _, m := range a.models {
		name := cmp.Or(m.QuotaName, m.Name)
		row(fmt.Sprintf("On-demand model inference requests per minute for %s %s", m.Provider, name), simRequestsPerMinute, "None")
		row(fmt.Sprintf("On-demand InvokeModel tokens per minute for %s", name), simTokensPerMinute, "None")
		b := m.Batch
		if b == nil {
			continue
		}
		name = cmp.Or(m.BatchName, m.Name)
		kinds := []struct {
			phrase string
			v      float64
		}{
			{"Minimum number of records per batch inference job", float64(b.MinRecords)},
			{"Records per batch inference job", float64(b.MaxRecords)},
			{"Records per input file per batch inference job", float64(b.MaxRecordsPerFile)},
			{"Batch inference input file size (in GB)", b.FileGB},
			{"Batch inference job size (in GB)", b.JobGB},
			{"Sum of in-progress and submitted batch inference jobs using a base model", float64(b.Concurrent)},
		}
		for _, k := range kinds {
			n := k.phrase + " for " + name
			if m.QuotaModelFirst {
				n = name + " " + strings.ToLower(k.phrase[:1]) + k.phrase[1:]
			}
			row(n, k.v, "None")
		}
	}
	return out
}

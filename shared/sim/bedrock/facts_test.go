package bedrock

// The facts test: each model's facts are read from its one row, and every
// simulator answer that depends on the model must agree with that row. A
// table re-introduced beside the row (a second modality list, a second
// account listing, a second rules map) that disagrees makes it fail.

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// factsPNG is a small valid image, factsPDF a one-page PDF.
func factsPNG(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const factsPDF = "%PDF-1.4\n1 0 obj\n<< /Type /Page >>\nendobj\n%%EOF\n"

// call serves one request on h and returns the status and decoded body.
func call(t *testing.T, h http.Handler, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader = http.NoBody
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	if out == nil {
		out = map[string]any{"raw": rec.Body.String()}
	}
	return rec.Code, out
}

func strList(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestBedrockModelFacts(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	bs := NewBedrockSim(nil, nil)
	bs.Log = quiet
	t.Cleanup(func() { bs.Close() })
	rt := &RuntimeSim{Log: quiet}

	_, listed := call(t, bs, "GET", "/foundation-models", nil)
	summaries := map[string]map[string]any{}
	for _, s := range listed["modelSummaries"].([]any) {
		m := s.(map[string]any)
		summaries[m["modelId"].(string)] = m
	}
	_, profs := call(t, bs, "GET", "/inference-profiles?type=SYSTEM_DEFINED", nil)
	profiles := map[string]bool{}
	for _, p := range profs["inferenceProfileSummaries"].([]any) {
		profiles[p.(map[string]any)["inferenceProfileId"].(string)] = true
	}
	quotaNames := map[string]bool{}
	for _, r := range bs.Models.quotaRows() { // what QuotasSim serves
		quotaNames[r["QuotaName"].(string)] = true
	}
	priced := map[string]bool{}
	for _, p := range DefaultPriceList() {
		priced[cmp.Or(p.Attributes["model"], p.Attributes["titanModel"], strings.TrimSuffix(p.Attributes["servicename"], " (Amazon Bedrock Edition)"))] = true
	}
	img := base64.StdEncoding.EncodeToString(factsPNG(t))
	doc := base64.StdEncoding.EncodeToString([]byte(factsPDF))

	seen := map[string]bool{}
	for _, m := range bedrockCatalog {
		t.Run(m.id, func(t *testing.T) {
			if seen[m.id] {
				t.Fatalf("two rows for %s", m.id)
			}
			seen[m.id] = true
			has := func(mod string) bool { return slices.Contains(m.in, mod) }
			onDemand := slices.Contains(m.inRegion, "*") || slices.Contains(m.inRegion, sim.DefaultRegion)

			// The runtime: what it accepts follows the row.
			text := m.fam == famClaude || m.fam == famNova || m.fam == famLlama || m.fam == famMistral
			if text {
				id := m.id
				if !onDemand {
					id = "us." + m.id
				}
				converse := func(content []any, extra map[string]any) (int, string) {
					body := map[string]any{"messages": []any{map[string]any{"role": "user", "content": content}}}
					for k, v := range extra {
						body[k] = v
					}
					code, out := call(t, rt, "POST", "/model/"+url.PathEscape(id)+"/converse", body)
					msg, _ := out["message"].(string)
					return code, msg
				}
				hello := []any{map[string]any{"text": "hello"}}
				if code, msg := converse(hello, nil); code != http.StatusOK {
					t.Fatalf("runtime refuses %s: %d %s", id, code, msg)
				}
				base, _ := converse(hello, nil)
				if m.id != id { // profile-only: the base id is refused on demand
					base, _ = call(t, rt, "POST", "/model/"+url.PathEscape(m.id)+"/converse", map[string]any{"messages": []any{map[string]any{"role": "user", "content": hello}}})
				}
				if got := base == http.StatusOK; got != onDemand {
					t.Errorf("runtime serves the base id on demand: %v, row says %v", got, onDemand)
				}
				for _, c := range []struct {
					what    string
					content []any
					want    bool
				}{
					{"an image", []any{map[string]any{"image": map[string]any{"format": "png", "source": map[string]any{"bytes": img}}}, hello[0]}, has("IMAGE")},
					{"a document", []any{map[string]any{"document": map[string]any{"format": "pdf", "name": "facts", "source": map[string]any{"bytes": doc}}}, hello[0]}, has("DOCUMENT")},
				} {
					code, msg := converse(c.content, nil)
					if got := code == http.StatusOK; got != c.want {
						t.Errorf("runtime takes %s: %v (%d %s); row input modalities %v", c.what, got, code, msg, m.in)
					}
				}
				if code, _ := converse(hello, map[string]any{"system": []any{map[string]any{"text": "be brief"}}}); (code == http.StatusOK) == m.noSystem {
					t.Errorf("runtime answers a system prompt %d; row noSystem=%v", code, m.noSystem)
				}
				if code, _ := converse(hello, map[string]any{"inferenceConfig": map[string]any{"temperature": 0.5}}); (code == http.StatusOK) == m.noSampling {
					t.Errorf("runtime answers a temperature %d; row noSampling=%v", code, m.noSampling)
				}
				for _, c := range []struct {
					n    int
					want int
				}{{m.maxOut, http.StatusOK}, {max(m.maxOut, m.maxOutBeta) + 1, http.StatusBadRequest}} {
					if code, msg := converse(hello, map[string]any{"inferenceConfig": map[string]any{"maxTokens": c.n}}); code != c.want {
						t.Errorf("maxTokens %d: %d %s, want %d (row maxOut %d)", c.n, code, msg, c.want, m.maxOut)
					}
				}
			}
			if m.fam != famUnknown && !text && m.maxOut != 0 {
				t.Errorf("an embedding row sets maxOut")
			}

			// The account, its profiles and quotas, and batch: as the row lists them.
			s, ok := summaries[m.id]
			if ok != (m.listed != nil) {
				t.Fatalf("ListFoundationModels lists it: %v; row listed: %v", ok, m.listed != nil)
			}
			if !ok {
				return
			}
			if got := strList(s["inputModalities"]); !slices.Equal(got, m.in) {
				t.Errorf("account input modalities %v, row %v", got, m.in)
			}
			if got := strList(s["outputModalities"]); !slices.Equal(got, m.out) {
				t.Errorf("account output modalities %v, row %v", got, m.out)
			}
			types := strList(s["inferenceTypesSupported"])
			if got := slices.Contains(types, "ON_DEMAND"); got != onDemand {
				t.Errorf("account lists ON_DEMAND: %v; row serves in-Region: %v", got, onDemand)
			}
			if got := slices.Contains(types, "INFERENCE_PROFILE"); got != m.profiles {
				t.Errorf("account lists INFERENCE_PROFILE: %v; row profiles: %v", got, m.profiles)
			}
			for _, g := range m.listed.geos {
				if !m.profiles {
					t.Errorf("the account offers a %s profile of a model without profiles", g)
				}
				if !profiles[g+"."+m.id] {
					t.Errorf("ListInferenceProfiles lacks %s.%s", g, m.id)
				}
			}
			batchQuota := "Records per batch inference job for " + cmp.Or(m.listed.batchName, m.listed.name)
			if m.listed.quotaFirst {
				batchQuota = cmp.Or(m.listed.batchName, m.listed.name) + " records per batch inference job"
			}
			if quotaNames[batchQuota] != m.listed.batch {
				t.Errorf("Service Quotas lists %q: %v; row batch: %v", batchQuota, quotaNames[batchQuota], m.listed.batch)
			}
			code, out := call(t, bs, "POST", "/model-invocation-job", map[string]any{
				"jobName": "facts-" + strings.NewReplacer(".", "-", ":", "-").Replace(m.id), "modelId": m.id,
				"roleArn":          "arn:aws:iam::123456789012:role/sim",
				"inputDataConfig":  map[string]any{"s3InputDataConfig": map[string]any{"s3Uri": "s3://in/facts.jsonl"}},
				"outputDataConfig": map[string]any{"s3OutputDataConfig": map[string]any{"s3Uri": "s3://out/"}},
			})
			if got := code == http.StatusOK; got != m.listed.batch {
				t.Errorf("CreateModelInvocationJob accepted: %v (%d %v); row batch: %v", got, code, out, m.listed.batch)
			}
			if m.price != nil && !priced[m.price.name] {
				t.Errorf("the Price List has no product for %q", m.price.name)
			}
		})
	}
}

// TestFamilyOf: every row's id, with the rules forgotten, falls back to its own family.
func TestFamilyOf(t *testing.T) {
	for _, m := range bedrockCatalog {
		if m.fam == famUnknown {
			continue
		}
		if got := familyOf(m.id); got != m.fam {
			t.Errorf("familyOf(%s) = %v, row %v", m.id, got, m.fam)
		}
	}
}

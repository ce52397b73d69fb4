package local_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// hyparquetScript reads the Parquet file argv[2] with hyparquet (an
// independent JavaScript reader) and prints its rows as JSON.
const hyparquetScript = `
const dir = process.argv[3]
const { parquetReadObjects } = await import(dir + '/src/index.js')
const { asyncBufferFromFile } = await import(dir + '/src/node.js')
const file = await asyncBufferFromFile(process.argv[2])
const rows = await parquetReadObjects({ file })
process.stdout.write(JSON.stringify(rows, (k, v) => typeof v === 'bigint' ? Number(v) : v))
`

// readParquet exports a job's results as Parquet and reads the file back
// with hyparquet under node: its rows, by column name.
func readParquet(t *testing.T, cs *mcp.ClientSession, jobID string) []map[string]any {
	t.Helper()
	tools := os.Getenv("MCPBATCH_TOOLS")
	if tools == "" {
		tools = filepath.Join("..", "..", "..", ".tools")
	}
	dir, _ := filepath.Abs(filepath.Join(tools, "hyparquet", "node_modules", "hyparquet"))
	if _, err := os.Stat(filepath.Join(dir, "src", "node.js")); err != nil {
		if os.Getenv("MCPBATCH_E2E") == "1" {
			t.Fatalf("%s missing: run bash .ci/tools.sh", dir)
		}
		t.Skipf("%s missing (bash .ci/tools.sh installs it)", dir)
	}
	node := filepath.Join(tools, "bin", "node22")
	if _, err := os.Stat(node); err != nil {
		node = "node"
	}
	out := call[mcpserver.ExportOut](t, cs, "export_results", map[string]any{"job_id": jobID, "format": "parquet"})
	body := readURL(t, out.URL)
	if len(body) < 8 || string(body[:4]) != "PAR1" || string(body[len(body)-4:]) != "PAR1" {
		t.Fatalf("export of %d bytes is not a Parquet file", len(body))
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "results.parquet")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(tmp, "read.mjs")
	if err := os.WriteFile(script, []byte(hyparquetScript), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(node, script, file, "file://"+dir).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("hyparquet: %v\n%s", err, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatalf("hyparquet output %.300s: %v", b, err)
	}
	if len(rows) != out.Records {
		t.Fatalf("hyparquet read %d rows, the export says %d records", len(rows), out.Records)
	}
	if len(rows) > 0 {
		t.Logf("hyparquet read %d rows of %d bytes, columns %v", len(rows), len(body), slices.Sorted(maps.Keys(rows[0])))
	}
	return rows
}

// checkParquet holds the Parquet export of a job with the ticket schema to
// its results: the fixed columns, and the schema's fields as typed columns.
func checkParquet(t *testing.T, cs *mcp.ClientSession, jobID string, recs []mcpserver.RecordOut) {
	t.Helper()
	rows := readParquet(t, cs, jobID)
	for i, r := range recs {
		row := rows[i]
		if row["id"] != r.ID || row["status"] != r.Status || row["input_tokens"] != float64(r.InputTokens) || row["output_tokens"] != float64(r.OutputTokens) {
			t.Errorf("row %d = %v, result %+v", i, row, r)
			continue
		}
		if cost, ok := row["cost_usd"].(float64); !ok || (r.InputTokens > 0 && cost <= 0) {
			t.Errorf("row %d cost_usd %v", i, row["cost_usd"])
		}
		v, _ := r.OutputJSON.(map[string]any)
		switch r.Status {
		case "succeeded":
			if row["category"] != v["category"] || row["confidence"] != v["confidence"] || row["summary"] != v["summary"] || row["output"] != r.Output {
				t.Errorf("row %d = %v, want the schema's fields of %v", i, row, v)
			}
		default:
			if row["error_code"] != r.ErrorCode || row["category"] != nil {
				t.Errorf("failed row %d = %v, want error %s and no schema fields", i, row, r.ErrorCode)
			}
		}
	}
}

// Command uploadprobe runs one file submit end to end in make dev terms and
// prints its times and the process's peak memory: create_upload over MCP, the
// HTTP PUT of a generated JSONL file to the link (into the object folder),
// submit_batch (which answers validating), then the validation the local bus
// hands to the validate handler (two passes over the file, the provider
// inputs written, the job submitted to the Bedrock simulator).
//
//	go run ./shared/app/local/internal/uploadprobe -mib 1024
//
// The file is generated while it is uploaded, so only the suite occupies
// memory. peak_rss_mib is the whole process (MCP server, upload handler,
// validation, simulator); peak_heap_mib is the Go heap in use, sampled during
// the validation, and peak_live_mib the heap the last collection found live
// (garbage excluded, so it is what follows the file if anything does).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/procstat"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

func main() {
	mib := flag.Int("mib", 1024, "size of the uploaded file in MiB")
	lineBytes := flag.Int("line", 1100, "bytes per line (the record cap is 1,000,000 records)")
	dir := flag.String("dir", "", "suite folder (default: a temporary one, removed after)")
	flag.Parse()
	if err := run(*mib, *lineBytes, *dir, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "uploadprobe:", err)
		os.Exit(1)
	}
}

// Result is what one run measured.
type Result struct {
	Bytes, Records        int64
	Put, Answer, Validate time.Duration
	// Status is the job's; ProviderStatus its parts' (an upload job stays
	// validating, never moving backwards, until the provider job runs).
	Status, ProviderStatus               string
	Parts                                int
	PeakRSS, PeakHeap, PeakLive, HeapEnd uint64
}

func run(mib, lineBytes int, dir string, out io.Writer) error {
	res, err := probe(int64(mib)<<20, lineBytes, dir)
	if err != nil {
		return err
	}
	total := res.Put + res.Answer + res.Validate
	fmt.Fprintf(out, "file_mib=%.0f records=%d put=%s submit_answer=%s validate_and_submit=%s total=%s "+
		"validate_mib_per_s=%.1f end_to_end_mib_per_s=%.1f status=%s provider_status=%s parts=%d peak_rss_mib=%.1f peak_heap_mib=%.1f peak_live_mib=%.1f\n",
		float64(res.Bytes)/(1<<20), res.Records, res.Put.Round(time.Millisecond), res.Answer.Round(time.Millisecond),
		res.Validate.Round(time.Millisecond), total.Round(time.Millisecond),
		float64(res.Bytes)/(1<<20)/res.Validate.Seconds(), float64(res.Bytes)/(1<<20)/total.Seconds(),
		res.Status, res.ProviderStatus, res.Parts, float64(res.PeakRSS)/(1<<20), float64(res.PeakHeap)/(1<<20), float64(res.PeakLive)/(1<<20))
	return nil
}

func probe(size int64, lineBytes int, dir string) (*Result, error) {
	ctx := context.Background()
	if dir == "" {
		d, err := os.MkdirTemp("", "uploadprobe-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	l, err := local.New(ctx, local.Options{Dir: dir, Log: slog.New(slog.DiscardHandler),
		Owner: func(*http.Request) (string, error) { return "probe", nil }})
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(l.Handler())
	defer func() { srv.Close(); l.Close() }()
	l.Uploads.SetBaseURL(srv.URL)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "uploadprobe", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()

	var up mcpserver.CreateUploadOut
	if err := local.CallTool(ctx, cs, "create_upload", map[string]any{}, &up); err != nil {
		return nil, err
	}
	gen := &generator{size: size, line: lineBytes}
	t0 := time.Now()
	req, err := http.NewRequestWithContext(ctx, up.Method, up.URL, gen)
	if err != nil {
		return nil, err
	}
	for k, v := range up.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("PUT: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("PUT: status %d", resp.StatusCode)
	}
	res := &Result{Bytes: gen.written, Records: gen.records, Put: time.Since(t0)}

	stop := sampleHeap(&res.PeakHeap, &res.PeakLive)
	t1 := time.Now()
	var h mcpserver.JobHandle
	if err := local.CallTool(ctx, cs, "submit_batch", map[string]any{"model": "anthropic.claude-haiku-4-5-20251001-v1:0", "input_upload_id": up.UploadID}, &h); err != nil {
		return nil, err
	}
	res.Answer = time.Since(t1)
	if h.Status != "validating" {
		return nil, fmt.Errorf("submit_batch answered status %q, want validating", h.Status)
	}
	t2 := time.Now()
	l.Bus.Wait() // the validate handler runs on the bus's delivery
	res.Validate = time.Since(t2)
	stop()
	var j mcpserver.JobView
	if err := local.CallTool(ctx, cs, "get_job", map[string]any{"job_id": h.JobID}, &j); err != nil {
		return nil, err
	}
	if j.Error != "" || int64(j.RecordCount) != res.Records {
		return nil, fmt.Errorf("job after validation: status %s, %d records (want %d), error %q", j.Status, j.RecordCount, res.Records, j.Error)
	}
	full, _ := l.Service.Batch.Store.GetJob(ctx, h.JobID)
	res.Status, res.ProviderStatus, res.Parts = j.Status, j.ProviderStatus, len(full.Parts)
	peak, err := procstat.PeakRSS()
	res.PeakRSS = uint64(peak)
	return res, err
}

// sampleHeap records the peaks of the heap in use and of the live heap until
// stop is called. GC is left at its default (GOGC=100): the heap in use may
// grow to twice what is live, and by how much depends on when collections
// fall, so only the live heap is steady enough to compare runs by.
func sampleHeap(peak, peakLive *uint64) (stop func()) {
	debug.SetGCPercent(100)
	runtime.GC() // start from what is live, not an earlier run's garbage
	var done atomic.Bool
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for !done.Load() {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapInuse)
			metrics.Read(live)
			*peakLive = max(*peakLive, live[0].Value.Uint64())
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() { done.Store(true); <-finished }
}

// generator is a JSONL file of about size bytes, lineBytes a line: records in
// both formats, every tenth without an id (the validation generates one).
type generator struct {
	size     int64
	line     int
	written  int64
	records  int64
	buf      []byte // what is left of the current line
	lineBuf  []byte
	pad      string
	finished bool
}

func (g *generator) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.finished {
			return 0, io.EOF
		}
		if g.written+int64(g.line) > g.size { // never over size: the upload limit is exact
			g.finished = true
			continue
		}
		if g.pad == "" {
			g.pad = strings.Repeat("lorem ipsum ", g.line/12+1)
		}
		i := g.records
		var head string
		switch {
		case i%10 == 9:
			head = `{"prompt":"`
		case i%10 == 5:
			head = `{"id":"doc-` + strconv.FormatInt(i, 10) + `","messages":[{"role":"user","content":"`
		default:
			head = `{"id":"doc-` + strconv.FormatInt(i, 10) + `","prompt":"`
		}
		tail := `"}` + "\n"
		if i%10 == 5 {
			tail = `"}]}` + "\n"
		}
		n := max(g.line-len(head)-len(tail), 1)
		g.lineBuf = append(append(append(g.lineBuf[:0], head...), g.pad[:n]...), tail...)
		g.buf = g.lineBuf
		g.records++
		g.written += int64(len(g.buf))
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

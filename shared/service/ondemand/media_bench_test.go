package ondemand_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/internal/procstat"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock/bedrockbatch"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrockrt"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
)

// visionModel reads images (catalog input_modalities) and runs on demand.
const visionModel = "anthropic.claude-haiku-4-5-20251001-v1:0"

// converseSink stands in for bedrock-runtime's Converse endpoint in the
// memory benchmark (a test double, not the simulator: the simulator decodes
// each ~100 MB body whole, which would swamp the runner's own figures). It
// reads each request body streaming, checks it is as long as its
// Content-Length, counts its image blocks, and answers a minimal Converse
// response.
type converseSink struct {
	images, calls atomic.Int64
}

func (s *converseSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const marker = `{"image":{`
	br := bufio.NewReaderSize(r.Body, 64<<10)
	var n int64
	matched := 0
	for {
		c, err := br.ReadByte()
		if err != nil {
			break
		}
		n++
		switch {
		case c == marker[matched]:
			matched++
			if matched == len(marker) {
				s.images.Add(1)
				matched = 0
			}
		case c == marker[0]:
			matched = 1
		default:
			matched = 0
		}
	}
	if want, _ := strconv.ParseInt(r.Header.Get("Content-Length"), 10, 64); want != n {
		http.Error(w, fmt.Sprintf(`{"message":"body %d bytes, Content-Length %d"}`, n, want), http.StatusBadRequest)
		return
	}
	s.calls.Add(1)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"text":"A noise image."}]}},"stopReason":"end_turn",`+
		`"usage":{"inputTokens":1600,"outputTokens":5,"totalTokens":1605},"metrics":{"latencyMs":1}}`)
}

// noisePNG is a w×h PNG of random pixels: it does not compress, so its
// size is about 4·w·h bytes.
func noisePNG(tb testing.TB, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// peakHeap samples the heap's object bytes (live and not yet swept) until
// stopped, and returns the highest sample.
func peakHeap() (stop func() uint64) {
	done := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// BenchmarkOnDemandMedia8x20: an on-demand run of 8 records, each with 20
// in-limit images of ~3.7 MB by s3:// (Converse allows 20 images of at most
// 3.75 MB per request), 8 calls allowed in flight, through the real
// bedrockruntime client. peak_heap_MB is the highest heap (objects, live and
// unswept) seen during the run; the target is under 256 MB, inside the
// 512 MB on-demand function. peak_rss_MB is the process's high-water mark
// (setup included).
// Run: go test -run '^$' -bench OnDemandMedia -benchtime=1x ./shared/service/ondemand/
func BenchmarkOnDemandMedia8x20(b *testing.B) {
	const records, perRecord, conc = 8, 20, 8
	ctx := context.Background()
	st, blobs := localdeps.New(b)
	sink := &converseSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	client := bedrockruntime.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", "")},
		func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(srv.URL) }, bedrockrt.NoSDKRetries)
	svc := graph.New(graph.Deps{Store: st, Blobs: blobs, Bus: &recBus{}, Bucket: "s3://test", JobPrefix: "mcpbatch",
		Providers: []service.BatchProvider{&bedrockbatch.Provider{ModelIDs: []string{visionModel}}}, Region: "us-east-1",
		OnDemandModel: &bedrockrt.Model{Client: client}, OnDemandConcurrency: conc})
	area := batch.UploadArea("s3://test", "o")
	var size int64
	for i := range perRecord {
		img := noisePNG(b, 1100, 840) // 3,696,xxx bytes: in Converse's 3.75 MB
		size = int64(len(img))
		if _, err := blobs.Put(ctx, blob.Join(area, fmt.Sprintf("img-%02d.png", i)), bytes.NewReader(img), "image/png"); err != nil {
			b.Fatal(err)
		}
	}
	recs := make([]job.Input, records)
	for r := range recs {
		var blocks []any
		for i := range perRecord {
			blocks = append(blocks, map[string]any{"type": "image", "source": map[string]any{"type": "s3", "uri": blob.Join(area, fmt.Sprintf("img-%02d.png", i))}})
		}
		blocks = append(blocks, map[string]any{"type": "text", "text": "What is in these images?"})
		raw, _ := json.Marshal([]any{map[string]any{"role": "user", "content": blocks}})
		recs[r] = job.Input{ID: fmt.Sprint("r", r), Messages: raw}
	}
	for b.Loop() {
		b.StopTimer()
		j, err := svc.Batch.Submit(ctx, batch.SubmitRequest{Owner: "o", Model: visionModel, Mode: job.ModeOnDemand, Records: recs, Params: job.Params{MaxTokens: 100}})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		sink.images.Store(0)
		b.StartTimer()
		stop := peakHeap()
		if err := svc.OnDemandRuns.RunOnDemand(ctx, j.ID); err != nil {
			b.Fatal(err)
		}
		peak := stop()
		b.StopTimer()
		got, err := st.GetJob(ctx, j.ID)
		if err != nil {
			b.Fatal(err)
		}
		if got.Succeeded != records || sink.images.Load() != records*perRecord {
			b.Fatalf("job %s: %d succeeded (%s), %d images sent; want %d and %d", got.ID, got.Succeeded, got.Error, sink.images.Load(), records, records*perRecord)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MB")
		b.ReportMetric(procstat.PeakRSSMB(), "peak_rss_MB")
		b.ReportMetric(float64(size)/1e6, "image_MB")
		b.StartTimer()
	}
}

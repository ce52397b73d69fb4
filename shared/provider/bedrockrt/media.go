package bedrockrt

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"golang.org/x/sync/semaphore"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
)

// allModalities: the submit checked the record against the model's own input
// modalities; here the blocks are only measured again (their Info filled) and
// held to Converse's limits and the model's document rules before rendering.
var allModalities = []string{"text", "image", "document"}

// DefaultMediaBytesInFlight bounds the bytes of s3:// parts the records
// running at once hold (each part is read once, checked and sent from
// memory). A record needing more than the bound runs alone. With Converse's
// 20 images of 3.75 MB per request, one full record fits; the 512 MB
// on-demand function keeps the rest for the runtime and the answers.
const DefaultMediaBytesInFlight = 96 << 20

// mediaBudget is the byte semaphore shared by the records of one Model.
type mediaBudget struct {
	once sync.Once
	sem  *semaphore.Weighted
	size int64
}

func (m *Model) budget() (*semaphore.Weighted, int64) {
	m.media.once.Do(func() {
		m.media.size = m.MediaBytesInFlight
		if m.media.size <= 0 {
			m.media.size = DefaultMediaBytesInFlight
		}
		m.media.sem = semaphore.NewWeighted(m.media.size)
	})
	return m.media.sem, m.media.size
}

// converseMessages renders a request's messages as the SDK's Converse
// messages, checking its image and document blocks first. Media parts go
// into the request body as it is sent (ps.option, nil without media);
// release gives their bytes back to the budget once the call returned.
func (m *Model) converseMessages(ctx context.Context, modelID, id string, r *bedrock.Request, rules *model.Model) (msgs []types.Message, ps *parts, release func(), err error) {
	release = func() {}
	media := false
	for _, msg := range r.Messages {
		for _, b := range msg.Blocks {
			media = media || b.Kind == content.KindImage || b.Kind == content.KindDocument
		}
	}
	rec := &content.Record{ID: id, Messages: r.Messages}
	if !media {
		msgs, err = (&content.Renderer{Path: content.PathBedrockConverse, Store: m.Content}).ConverseMessages(ctx, r.Messages)
		return msgs, nil, release, err
	}
	ch, err := content.NewChecker(content.PathBedrockConverse, modelID, allModalities, m.Content)
	if err != nil {
		return nil, nil, release, err
	}
	if rules != nil && rules.Documents != nil {
		d := rules.Documents
		ch.PDF = content.PDFRules{MaxBytes: d.MaxPDFBytes, ExemptFromCap: d.PDFExemptFromCap, Citations: d.CitationsForPDF, Source: rules.FactsSource}
	}
	ch.Keep = true
	sem, size := m.budget()
	weight := min(ch.Weigh(ctx, rec), size)
	if err := sem.Acquire(ctx, weight); err != nil {
		return nil, nil, release, err
	}
	release = func() { sem.Release(weight) }
	if err := ch.Validate(ctx, rec); err != nil {
		release()
		return nil, nil, func() {}, fmt.Errorf("images and documents: %w", err)
	}
	ps = newParts()
	rd := &content.Renderer{Path: content.PathBedrockConverse, Store: m.Content}
	msgs, err = rd.ConverseMessagesWith(ctx, rec.Messages, func(b *content.Block) ([]byte, error) {
		p := &part{raw: b.Bytes}
		if b.Source == content.SourceBase64 {
			p.raw, p.b64 = nil, b.Data
		} else if b.Bytes == nil {
			return nil, fmt.Errorf("%s was not kept by the check", b.URI)
		}
		return ps.placeholder(p), nil
	})
	if err != nil {
		release()
		return nil, nil, func() {}, err
	}
	return msgs, ps, release, nil
}

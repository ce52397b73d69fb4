package batch

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/claude"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// onDemandBlocks are the content block types an on-demand (Converse) run
// renders; anything else failed at run time before it was refused here.
var onDemandBlocks = map[string]bool{"text": true, "image": true, "document": true}

// checkMessages holds every record's messages to the shape the run will
// need, on both paths: roles user|assistant starting with user, content a
// non-empty string or array of blocks (shared with the Claude encoder, so
// the batch path refuses with the same words), no video or audio block
// (no catalog model reads them in messages), and on demand only the block
// types Converse renders. Without it an on-demand run took role "robot" or
// content 5 and dropped or failed them later.
func checkMessages(req *SubmitRequest, m *model.Model) error {
	for i, r := range req.Records {
		if len(r.Messages) == 0 {
			continue
		}
		f := func(name string) string { return fmt.Sprintf("records[%d].%s", i, name) }
		if _, err := claude.Messages(f, r); err != nil {
			return err
		}
		var msgs []struct {
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(r.Messages, &msgs); err != nil {
			return job.Fieldf(f("messages"), "must be a JSON array of {role, content}")
		}
		for j, msg := range msgs {
			if claude.FirstByte(msg.Content) != '[' {
				continue
			}
			var blocks []struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(msg.Content, &blocks); err != nil {
				return job.Fieldf(f(fmt.Sprintf("messages[%d].content", j)), "must be a non-empty string or array of content blocks {type, ...}")
			}
			for k, b := range blocks {
				name := f(fmt.Sprintf("messages[%d].content[%d]", j, k))
				switch {
				case b.Type == "":
					return job.Fieldf(name, "a content block needs a type (text, image or document)")
				case b.Type == "video" || b.Type == "audio":
					return job.Fieldf(name, "%s blocks are taken on no path in messages: model %s reads %s. A model that reads %s takes it in its own native request body: model_input (mode batch)",
						b.Type, m.ID, strings.Join(m.InputModalities, ", "), b.Type)
				case req.Mode == job.ModeOnDemand && !onDemandBlocks[b.Type]:
					return job.Fieldf(name, "on-demand runs take text, image and document blocks (got %q); submit 100 or more records with mode batch for other Claude block types", b.Type)
				}
			}
		}
	}
	return nil
}

package job

import "time"

// EmbedParams are the job-level settings of an embedding model.
type EmbedParams struct {
	// Dimensions of the vectors (Titan Text Embeddings V2: 256, 512 or 1024;
	// 0: the model's largest).
	Dimensions int `json:"dimensions,omitempty"`
	// Normalize asks for unit vectors (Titan; nil: true).
	Normalize *bool `json:"normalize,omitempty"`
	// InputType is Cohere's input_type: search_document (default),
	// search_query, classification or clustering.
	InputType string `json:"inputType,omitempty"`
	// Truncate says what to do with a text over the model's input limit:
	// NONE (default: refuse it), START (drop its start) or END (drop its end).
	Truncate string `json:"truncate,omitempty"`
}

// Embedding input types (Cohere Embed v3) and truncate modes.
const (
	InputSearchDocument = "search_document"
	InputSearchQuery    = "search_query"
	TruncateNone        = "NONE"
	TruncateStart       = "START"
	TruncateEnd         = "END"
)

// IndexTarget is the vector index an embedding job writes its vectors into,
// fixed at submit.
type IndexTarget struct {
	Name      string `json:"name"`
	Metric    string `json:"metric"`
	Dimension int    `json:"dimension"`
	// Normalize is the job's normalize setting (nil: the model's default),
	// recorded on an index it creates so queries are embedded the same way.
	Normalize *bool `json:"normalize,omitempty"`
	// Writer is the ingest run writing the job's vectors now, until
	// WriterUntil (RunClaim after its claim): S3 Vectors has no conditional
	// write, so two ingests of one job (a duplicate "Job Output Ready") writing
	// at once would both count the same vectors as new.
	Writer      string    `json:"writer,omitempty"`
	WriterUntil time.Time `json:"writerUntil,omitzero"`
}

package bedrock

import "github.com/mcpbatch/mcpbatch/shared/job"

// usageNames are the members of a response's usage object, by the token
// count they hold, as "usage.<member>" (the name an error gives).
type usageNames struct{ input, output, cacheRead, cacheWrite string }

var (
	// converseUsage: a Converse response's usage, which Nova's native answer
	// shares (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html, 2026-12-03).
	converseUsage = usageNames{"usage.inputTokens", "usage.outputTokens", "usage.cacheReadInputTokens", "usage.cacheWriteInputTokens"}
	// claudeUsage: a Claude Messages response's usage
	// (https://docs.anthropic.com/en/api/messages, 2026-12-03).
	claudeUsage = usageNames{"usage.input_tokens", "usage.output_tokens", "usage.cache_read_input_tokens", "usage.cache_creation_input_tokens"}
)

// readUsage reads the usage object (or null) at b[i] into rec's token
// counts; members it does not name are skipped, a count of the wrong type is
// an error naming it.
func readUsage(b []byte, i int, n *usageNames, rec *job.Record) (int, error) {
	if byteAt(b, i) == 'n' {
		return literal(b, i, "null")
	}
	return eachMember(b, i, func(key []byte, j int) (next int, err error) {
		var dst *int64
		var name string
		switch k := string(key); {
		case k == n.input[len("usage."):]:
			dst, name = &rec.InputTokens, n.input
		case k == n.output[len("usage."):]:
			dst, name = &rec.OutputTokens, n.output
		case k == n.cacheRead[len("usage."):]:
			dst, name = &rec.CacheReadTokens, n.cacheRead
		case k == n.cacheWrite[len("usage."):]:
			dst, name = &rec.CacheWriteTokens, n.cacheWrite
		default:
			return skipValue(b, j)
		}
		*dst, next, err = readInt(b, j, name)
		return next, err
	})
}

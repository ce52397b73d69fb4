package service

import (
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// CallerInputPrefixes are the places of the stack's bucket where a caller's
// own input files may lie: its uploads (create_upload) and its inputs folder
// (files copied in with e.g. `aws s3 cp`), both named by its owner tag.
func CallerInputPrefixes(bucket, owner string) []string {
	tag := OwnerTag(owner)
	return []string{blob.Join(bucket, "uploads", tag) + "/", blob.Join(bucket, "inputs", tag) + "/"}
}

// CheckCallerInput refuses an input_uri outside the caller's own prefixes and
// the operator's allow-list (InputAllow): another caller's upload, a shared
// folder or another bucket. The answer is the same whether or not the object
// exists, so nobody can probe for other callers' keys.
func (c *Core) CheckCallerInput(field, owner, uri string) error {
	if _, key, err := blob.ParseURI(uri); err != nil || key == "" || strings.HasSuffix(key, "/") {
		return job.Fieldf(field, "want s3://bucket/key of one object (got %q)", Truncate(uri, 120))
	}
	allowed := append(CallerInputPrefixes(c.Bucket, owner), c.InputAllow...)
	for _, p := range allowed {
		if strings.HasPrefix(uri, p) && !strings.Contains(strings.TrimPrefix(uri, p), "..") {
			return nil
		}
	}
	own := CallerInputPrefixes(c.Bucket, owner)
	return job.Fieldf(field, "must lie in your own input folders, %s<key> (files you copy in) or %s<key> (your uploads: prefer input_upload_id)%s (got %q)",
		own[1], own[0], allowList(c.InputAllow), Truncate(uri, 120))
}

func allowList(p []string) string {
	if len(p) == 0 {
		return ""
	}
	return ", or under " + strings.Join(p, ", ")
}

package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
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

// CallerInputs are the places a caller's input_uri may name: the caller's
// own folders under Bucket, and the operator's Allow list.
type CallerInputs struct {
	// Bucket is the s3:// root of the stack's data.
	Bucket string
	// Allow are s3:// prefixes an operator opens to every caller (InputAllow).
	Allow []string
}

// CheckCallerInput refuses an input_uri outside the caller's own prefixes and
// the operator's allow-list (Allow): another caller's upload, a shared
// folder or another bucket. The answer is the same whether or not the object
// exists, so nobody can probe for other callers' keys.
func (c CallerInputs) CheckCallerInput(field, owner, uri string) error {
	if _, key, err := blob.ParseURI(uri); err != nil || key == "" || strings.HasSuffix(key, "/") {
		return job.Fieldf(field, "want s3://bucket/key of one object (got %q)", Truncate(uri, 120))
	}
	allowed := append(CallerInputPrefixes(c.Bucket, owner), c.Allow...)
	for _, p := range allowed {
		if under(uri, p) {
			return nil
		}
	}
	own := CallerInputPrefixes(c.Bucket, owner)
	return job.Fieldf(field, "must lie in your own input folders, %s<key> (files you copy in) or %s<key> (your uploads: prefer input_upload_id)%s (got %q)",
		own[1], own[0], allowList(c.Allow), Truncate(uri, 120))
}

// CheckCallerPrefix is CheckCallerInput for a folder of input files
// (s3://bucket/key/, ending in "/"): the same allow rules, held to every key
// the folder may hold.
func (c CallerInputs) CheckCallerPrefix(field, owner, prefix string) error {
	if _, key, err := blob.ParseURI(prefix); err != nil || strings.Trim(key, "/") == "" || !strings.HasSuffix(key, "/") {
		return job.Fieldf(field, "want s3://bucket/folder/ of input files, ending in / (got %q)", Truncate(prefix, 120))
	}
	// A folder is allowed when any key in it would be: check one.
	if err := c.CheckCallerInput(field, owner, prefix+"x"); err != nil {
		own := CallerInputPrefixes(c.Bucket, owner)
		return job.Fieldf(field, "must lie in your own input folders, %s<folder>/ (files you copy in) or %s%s (got %q)",
			own[1], own[0], allowList(c.Allow), Truncate(prefix, 120))
	}
	return nil
}

// under reports whether uri lies in folder p: whole path segments (p is
// read as a folder whether or not it ends in "/", so s3://b/shared does not
// open s3://b/shared-x/), never a bare bucket, never through "..".
func under(uri, p string) bool {
	if _, key, err := blob.ParseURI(p); err != nil || strings.Trim(key, "/") == "" {
		return false
	}
	folder := strings.TrimRight(p, "/") + "/"
	return strings.HasPrefix(uri, folder) && !strings.Contains(strings.TrimPrefix(uri, folder), "..")
}

// CheckInputAllow refuses an allow-list (MCPBATCH_INPUT_ALLOW) entry that is
// not s3://bucket/folder: a bare bucket would open every object in it.
func CheckInputAllow(list []string) error {
	for _, p := range list {
		_, key, err := blob.ParseURI(p)
		if err != nil {
			return fmt.Errorf("input allow-list entry %q: want s3://bucket/folder: %w", p, err)
		}
		if strings.Trim(key, "/") == "" {
			return fmt.Errorf("input allow-list entry %q is a whole bucket; name a folder, s3://bucket/folder/", p)
		}
	}
	return nil
}

func allowList(p []string) string {
	if len(p) == 0 {
		return ""
	}
	return ", or under " + strings.Join(p, ", ")
}

// CheckModelInputRefs refuses a native or Converse model_input body that
// points at S3 outside the caller's own input folders (CheckCallerInput):
// an s3Location's uri (Converse and Nova image, video and document sources)
// or an s3Uri (embedding models' media sources). Bedrock reads such an
// object with the batch or on-demand role, which reads the stack's whole
// input/ folder, so an unchecked reference would read other jobs' inputs.
// field names the body (records[i].model_input); the error names the key.
func (c CallerInputs) CheckModelInputRefs(field, owner string, body json.RawMessage) error {
	if !bytes.Contains(bytes.ToLower(body), []byte(`"s3`)) {
		return nil // cheap filter: no key that can point at S3
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil // not JSON: the encoder refuses it, naming the field
	}
	return c.checkRefs(field, owner, v)
}

func (c CallerInputs) checkRefs(at, owner string, v any) error {
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			if err := c.checkRefs(fmt.Sprintf("%s[%d]", at, i), owner, e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			f := at + "." + k
			switch strings.ToLower(k) {
			case "s3uri":
				uri, _ := v[k].(string)
				if err := c.CheckCallerInput(f, owner, uri); err != nil {
					return err
				}
				continue
			case "s3location":
				loc, _ := v[k].(map[string]any)
				uri, _ := loc["uri"].(string)
				if err := c.CheckCallerInput(f+".uri", owner, uri); err != nil {
					return err
				}
			}
			if err := c.checkRefs(f, owner, v[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

package transfer

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// listedBlobs lists a folder of made-up objects (nothing is stored).
type listedBlobs struct{ objs []blob.Object }

func (l listedBlobs) Put(context.Context, string, io.Reader, string) (int64, error) { return 0, nil }
func (l listedBlobs) Open(context.Context, string, int64) (io.ReadCloser, error) {
	return nil, blob.ErrNotFound
}
func (l listedBlobs) List(context.Context, string) ([]blob.Object, error) { return l.objs, nil }

// A submit over many files is held to the job limits before anything is
// stored, each refusal naming the field and the limit.
func TestListInputsLimits(t *testing.T) {
	const owner = "alice"
	folder := blob.Join("s3://b", "inputs", service.OwnerTag(owner), "corpus") + "/"
	objs := func(n int, size int64) []blob.Object {
		out := make([]blob.Object, n)
		for i := range out {
			out[i] = blob.Object{URI: folder + fmt.Sprintf("f%06d.jsonl", i), Size: size}
		}
		return out
	}
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("01m8xtyqh42htaygjrdch%05d", i)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		req   FileSubmitRequest
		objs  []blob.Object
		want  []string // in the refusal; nil: accepted
		files int
	}{
		{name: "a folder at the file limit", req: FileSubmitRequest{InputURI: folder}, objs: objs(MaxJobFiles, 10), files: MaxJobFiles},
		{name: "a folder past the file limit", req: FileSubmitRequest{InputURI: folder}, objs: objs(MaxJobFiles+1, 10),
			want: []string{"input_uri", strconv.Itoa(MaxJobFiles + 1), strconv.Itoa(MaxJobFiles)}},
		{name: "a folder past the byte limit", req: FileSubmitRequest{InputURI: folder}, objs: objs(3, 400<<30),
			want: []string{"input_uri", strconv.FormatInt(MaxJobBytes, 10), "1 TiB"}},
		{name: "folder markers and empty files are not files", req: FileSubmitRequest{InputURI: folder},
			objs: append(objs(2, 0), blob.Object{URI: folder + "sub/"}), want: []string{"input_uri", "no files under"}},
		{name: "another owner's folder", req: FileSubmitRequest{InputURI: blob.Join("s3://b", "inputs", service.OwnerTag("bob")) + "/"},
			objs: objs(1, 10), want: []string{"input_uri", "your own input folders"}},
		{name: "uploads at the file limit", req: FileSubmitRequest{UploadIDs: ids(MaxJobFiles)}, files: MaxJobFiles},
		{name: "uploads past the file limit", req: FileSubmitRequest{UploadIDs: ids(MaxJobFiles + 1)},
			want: []string{"input_upload_ids", strconv.Itoa(MaxJobFiles)}},
		{name: "an upload given twice", req: FileSubmitRequest{UploadIDs: []string{ids(2)[0], ids(2)[1], ids(2)[0]}},
			want: []string{"input_upload_ids[2]", "also input_upload_ids[0]"}},
		{name: "not an upload id", req: FileSubmitRequest{UploadIDs: []string{"../x"}}, want: []string{"input_upload_ids[0]", "not an upload id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{Blobs: listedBlobs{tc.objs}, Bucket: "s3://b"}
			tc.req.Owner = owner
			_, files, err := s.listInputs(context.Background(), tc.req)
			if tc.want == nil {
				if err != nil || len(files) != tc.files {
					t.Fatalf("%d files, %v; want %d accepted", len(files), err, tc.files)
				}
				return
			}
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err %v lacks %q", err, w)
				}
			}
		})
	}
}

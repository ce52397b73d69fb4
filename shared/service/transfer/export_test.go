package transfer

import (
	"context"

	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// SetFingerprint replaces the id fingerprint until restore is called.
func SetFingerprint(f func(string) uint64) (restore func()) {
	old := fingerprint
	fingerprint = f
	return func() { fingerprint = old }
}

// SetRecordCap lowers the record cap until restore is called.
func SetRecordCap(n int) (restore func()) {
	old := recordCap
	recordCap = n
	return func() { recordCap = old }
}

// Scan runs the validation of the file at uri (text records: no media checker).
func (s *Service) Scan(ctx context.Context, uri string, req batch.SubmitRequest, prov service.BatchProvider) (count int, taken func(string) bool, err error) {
	scan, err := s.scanFile(ctx, "input_uri", uri, nil, req, prov, nil)
	if err != nil {
		return 0, nil, err
	}
	return scan.count, scan.taken.has, nil
}

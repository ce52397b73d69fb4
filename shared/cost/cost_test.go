package cost

import (
	"math"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/store/dynamostore"
)

func TestUnits(t *testing.T) {
	for _, c := range []struct {
		size          int
		wru, rru, rre float64
		chunks        int64
	}{
		{0, 1, 1, 0.5, 1},
		{1, 1, 1, 0.5, 1},
		{1024, 1, 1, 0.5, 1},
		{1025, 2, 1, 0.5, 1},
		{4096, 4, 1, 0.5, 1},
		{4097, 5, 2, 1, 1},
		{64 << 10, 64, 16, 8, 1},
		{64<<10 + 1, 65, 17, 8.5, 2},
	} {
		if got := WriteUnits(c.size); got != c.wru {
			t.Errorf("WriteUnits(%d) = %v, want %v", c.size, got, c.wru)
		}
		if got := ReadUnits(c.size, false); got != c.rru {
			t.Errorf("ReadUnits(%d, strong) = %v, want %v", c.size, got, c.rru)
		}
		if got := ReadUnits(c.size, true); got != c.rre {
			t.Errorf("ReadUnits(%d, eventual) = %v, want %v", c.size, got, c.rre)
		}
		if got := Chunks(c.size); got != c.chunks {
			t.Errorf("Chunks(%d) = %v, want %v", c.size, got, c.chunks)
		}
	}
}

// TestBill counts a small run by hand and prices it line by line.
func TestBill(t *testing.T) {
	m := &Meter{}
	m.Invoke("ingest", 1024, 1500*time.Millisecond)                // 1.5 GB-s
	m.Invoke("ingest", 1024, 499*time.Millisecond+time.Nanosecond) // billed 500 ms: 0.5 GB-s
	m.Write("record", 2500, 0)                                     // 3 WRU
	m.Write("job", 100, 2)                                         // 1 WRU on the table + 2 on its indexes
	m.Read(9000, false)                                            // 3 RRU
	m.Put(3, 100)
	m.Get(2, 50)
	m.Event(100)
	m.Publish(70 << 10) // 2 chunks
	m.Log(1e9, false)
	u := m.Usage()
	if l := u.Lambda["ingest"]; l.Requests != 2 || math.Abs(l.GBSeconds-2) > 1e-9 {
		t.Fatalf("lambda usage %+v, want 2 requests, 2 GB-s", l)
	}
	p := USEast1
	want := map[string]float64{
		"ingest requests":      2 * 0.20 / 1e6,
		"ingest duration":      2 * 0.0000133334,
		"writes: record items": 3 * 0.625 / 1e6,
		"writes: job items":    3 * 0.625 / 1e6,
		"reads: other":         3 * 0.125 / 1e6,
		"PUT requests":         3 * 0.005 / 1000,
		"GET requests":         2 * 0.0004 / 1000,
		"custom events":        1 / 1e6,
		"publishes":            2 * 0.5 / 1e6,
		"log ingestion":        0.5,
	}
	bill := u.Bill(p)
	if len(bill) != len(want) {
		t.Fatalf("bill has %d lines, want %d: %v", len(bill), len(want), bill)
	}
	total := 0.0
	for i, l := range bill {
		w, ok := want[l.Item]
		if !ok || math.Abs(l.USD-w) > 1e-12 {
			t.Errorf("line %q = $%v, want $%v", l.Item, l.USD, w)
		}
		if i > 0 && bill[i-1].USD < l.USD {
			t.Errorf("bill not largest first at %d", i)
		}
		total += w
	}
	if math.Abs(Total(bill)-total) > 1e-12 {
		t.Errorf("Total %v, want %v", Total(bill), total)
	}
	// Linear extrapolation doubles every count.
	d := u.Scale(2)
	if d.DynamoWRU != 2*u.DynamoWRU || d.S3Puts != 6 || d.Lambda["ingest"].Requests != 4 || math.Abs(Total(d.Bill(p))-2*total) > 1e-9 {
		t.Errorf("Scale(2) = %+v", d)
	}
}

// TestWithKindSwapsRecordPages: a run priced with another layout of its
// records drops the S3 requests of its record pages and takes the other
// layout's, and keeps every other request.
func TestWithKindSwapsRecordPages(t *testing.T) {
	packed, today := &Meter{}, &Meter{}
	packed.Put(2, 10) // input files, not records
	packed.RecordPut(5, 5000)
	packed.RecordGet(4, 4000)
	packed.Write("record", 100, 0)
	today.Write("record", 100, 0)
	today.Write("record", 100, 0)
	u := packed.Usage().WithKind("record", today.Usage())
	if u.S3Puts != 2 || u.S3Gets != 0 || u.RecordPuts != 0 || u.WRUByItemKind["record"] != 2 || u.DynamoWRU != 2 {
		t.Fatalf("priced with one item per record: %+v, want 2 PUTs (the files'), no GETs, 2 record WRU", u)
	}
	if p := packed.Usage(); p.S3Puts != 7 || p.S3Gets != 4 || p.RecordPuts != 5 {
		t.Fatalf("packed usage %+v, want 7 PUTs (5 of pages), 4 GETs", p)
	}
}

// TestPagePutUnits: the store's price of a PUT in write units is the
// ratio of the prices here.
func TestPagePutUnits(t *testing.T) {
	if r := math.Round(USEast1.S3PerPut / USEast1.DynamoPerWRU); r != dynamostore.PagePutUnits {
		t.Fatalf("a PUT is priced as %v write units, dynamostore.PagePutUnits says %d", r, dynamostore.PagePutUnits)
	}
}

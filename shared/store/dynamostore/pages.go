package dynamostore

import (
	"bytes"
	"cmp"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

// Packed record sets (job.RecordSet.Packed) keep consecutive records in page
// items, so write and storage units follow compressed bytes, not records: a
// record item cost at least one write unit (1 KB) however small the record.
//
// Ordinals are cut into ranges of pageSpan; range r lives in shard r mod
// Shards. A PutRecords call writes, per range it touches, one page item or
// more (pageMaxRecords, pageMaxRaw) of its own records, sorted: the page is
// the records whole (storeutil.EncodeRecord, the document localstore keeps),
// gzip-compressed. A page's sort key is PG#<first ordinal>#<first id>#<hash
// of all its keys>, so a call that writes the same records again (a
// replayed ingest, a duplicate event) overwrites the same items; a call that
// writes some of them in another grouping adds pages, and a read keeps each
// record's newest copy (the page stamp). Nothing is read before a write.
//
// A store with object storage (WithOverflow, as deployed) puts the pages of
// a PutRecords call in one object when that is cheaper to write
// (PagePutUnits), each page item then only the object's URI and its bytes'
// place in it (attrRef, attrOff, attrLen): write units follow the bytes at
// S3's price, one PUT a call however many ranges its records fall in (a
// dense 1024-float embedding is 4-9 KB compressed, 4-9 write units a record
// inline). Each call puts a new object (never overwritten, so an item
// always points at the bytes it was written with); one an overwritten item
// pointed at is left to the bucket's lifecycle rule. Companions stay inline.
//
// Each page has a companion item, FX#<the same suffix>: the page's failed
// records whole and the keys of the others (attrOK). A failed-only listing
// reads companions, never pages; the keys are there so that a record
// rewritten as succeeded in another grouping hides its older failure, by
// the same newest-copy rule.
const (
	skPagePrefix = "PG#"
	skFailPrefix = "FX#"

	// pageSpan ordinals make a range: a record by key reads its range's
	// pages, and a listing reads every range its page touches whole, so a
	// range is about one page of records (a range read costs about what its
	// records cost to read one by one). Fixed: stored data depends on it.
	pageSpan = 128
	// pageMaxRecords and pageMaxRaw bound a page: 256 KB of record JSON is
	// 30-90 KB compressed; a page stored over pageMaxStored (records that
	// do not compress) is halved, so items stay far under the 400 KB limit.
	pageMaxRecords = 128
	pageMaxRaw     = 256 << 10
	pageMaxStored  = 96 << 10
	// pageMaxRawObject bounds a page of a store with object storage: no
	// item limit applies to it, so a range's 128 records stay one page (one
	// PUT) up to 8 KB of JSON each (a sparse vector's text; a dense 1024-float
	// one is 13-22 KB, three pages a range), and the page buffer stays small.
	pageMaxRawObject = 1 << 20

	attrRecs  = "recs" // gzip of a JSON array of records
	attrStamp = "at"   // when the page was written: the newer copy of a record wins
	attrCount = "n"    // records in the page
	attrOK    = "ok"   // companion: gzip of the okKeys of the records not failed
	attrRef   = "ref"  // a page in object storage: its object's URI
	attrOff   = "off"  // and where in it the page's attrRecs bytes start
	attrLen   = "len"  // and how many they are
)

// PagePutUnits is an S3 PUT's price in DynamoDB write units (shared/cost's
// us-east-1 prices; its tests check the ratio): a call's pages go to object
// storage when their items' write units pass those of the items left and a
// PUT. Reads then cost about the same (a GET is 1.6 strongly consistent read
// units, the item left one), and storage a tenth.
const PagePutUnits = 8

// writeUnits is what writing an item of size bytes costs (1 KB a unit).
func writeUnits(size int) int { return max(1, (size+1023)/1024) }

// rangeOf is the range of an ordinal, rangeShard the shard that keeps it.
func rangeOf(ordinal int) int { return ordinal / pageSpan }

// PageSpan is how many ordinals a range of a packed set spans.
const PageSpan = pageSpan

// PageRange is the range of ordinal.
func PageRange(ordinal int) int { return rangeOf(ordinal) }

func rangeShard(rs job.RecordSet, r int) int { return r % storeutil.Shards(rs.Shards) }

// ord10 is an ordinal zero-padded to ten digits, as in ORD# keys.
func ord10(o int) string { return fmt.Sprintf("%010d", o) }

// lastStamp never repeats within a process, so two writes of one record in
// the same nanosecond still order.
var lastStamp atomic.Int64

func (s *Store) stamp() int64 {
	now := s.now().UnixNano()
	for {
		last := lastStamp.Load()
		next := max(now, last+1)
		if lastStamp.CompareAndSwap(last, next) {
			return next
		}
	}
}

// encodedRecord is a record and its stored document.
type encodedRecord struct {
	key    job.RecordKey
	failed bool
	exp    int64
	doc    []byte
}

// page is the records of one page item, sorted by key.
type page struct {
	recs []encodedRecord
	raw  int
}

// pageBuffers hold the documents of the page being cut: ingest packs every
// record, and a fresh document each made garbage of every record's size.
var pageBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// packRecords groups recs (deduped) into pages: sorted by (ordinal, id), cut
// at range borders and at the page bounds. Each page is handed to emit as
// soon as it is cut; its documents are valid only during the call.
func packRecords(rs job.RecordSet, recs []job.Record, maxRaw int, emit func(page) error) error {
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareKeys(recs[a].Key(), recs[b].Key()) })
	buf := pageBuffers.Get().(*bytes.Buffer)
	defer pageBuffers.Put(buf)
	buf.Reset()
	var p page
	var ends []int // where each document of p ends in buf
	flush := func(n int) error {
		start := 0
		for i := range n {
			p.recs[i].doc = buf.Bytes()[start:ends[i]]
			start = ends[i]
		}
		return emit(page{recs: p.recs[:n]})
	}
	for _, i := range order {
		r := recs[i]
		r.JobID = rs.JobID
		start := buf.Len()
		if err := storeutil.AppendRecord(buf, &r); err != nil {
			return err
		}
		e := encodedRecord{key: r.Key(), failed: r.Status == job.RecordFailed, exp: storeutil.ExpiresUnix(r.ExpiresAt)}
		n := buf.Len() - start
		if len(p.recs) > 0 && (rangeOf(p.recs[0].key.Ordinal) != rangeOf(e.key.Ordinal) ||
			len(p.recs) >= pageMaxRecords || p.raw+n > maxRaw) {
			if err := flush(len(p.recs)); err != nil {
				return err
			}
			// The new document moves to the front for the next page.
			b := buf.Bytes()
			copy(b, b[start:])
			buf.Truncate(n)
			p, ends = page{}, ends[:0]
		}
		p.recs = append(p.recs, e)
		p.raw += n + 1
		ends = append(ends, buf.Len())
	}
	if len(p.recs) > 0 {
		return flush(len(p.recs))
	}
	return nil
}

func compareKeys(a, b job.RecordKey) int {
	return cmp.Or(cmp.Compare(a.Ordinal, b.Ordinal), cmp.Compare(a.ID, b.ID))
}

// suffix is the page's sort key after its prefix.
func (p page) suffix() string {
	h := fnv.New64a()
	for _, e := range p.recs {
		h.Write([]byte(strconv.Itoa(e.key.Ordinal)))
		h.Write([]byte{':'})
		h.Write([]byte(e.key.ID))
		h.Write([]byte{';'})
	}
	first := p.recs[0].key
	return ord10(first.Ordinal) + "#" + first.ID + "#" + strconv.FormatUint(h.Sum64(), 16)
}

// okKey is the key of a record a companion does not hold (not failed).
type okKey struct {
	O int    `json:"o"`
	I string `json:"i"`
}

// pageObject is the pages of a call put in object storage before the items
// that point at them.
type pageObject struct {
	uri  string
	body []byte
}

// pageWrites are the writes of one page: the page item and its companion.
func (s *Store) pageWrites(rs job.RecordSet, p page, stamp int64) ([]types.WriteRequest, error) {
	pk := str(recordPK(rs.JobID, rangeShard(rs, rangeOf(p.recs[0].key.Ordinal))))
	suffix := p.suffix()
	item, err := pageItem(pk, skPagePrefix+suffix, p.recs, stamp)
	if err != nil {
		return nil, err
	}
	var failed []encodedRecord
	var ok []okKey
	for _, e := range p.recs {
		if e.failed {
			failed = append(failed, e)
		} else {
			ok = append(ok, okKey{e.key.Ordinal, e.key.ID})
		}
	}
	fx, err := pageItem(pk, skFailPrefix+suffix, failed, stamp)
	if err != nil {
		return nil, err
	}
	size := ItemSize(fx)
	if !s.spillPages {
		// With object storage a page this large goes out whole (pagesOut:
		// it alone saves far more than a PUT), so only its companion counts.
		size = max(size, ItemSize(item))
	}
	if len(p.recs) == 1 && size > overflowAt {
		return nil, fmt.Errorf("record %s: %d bytes stored, over DynamoDB's item limit of %d: %w", p.recs[0].key.ID, size, maxItemBytes, store.ErrTooLarge)
	}
	if len(p.recs) > 1 && size > pageMaxStored {
		// Incompressible records (or failed ones, which stay inline in the
		// companion): halve the page until it fits.
		half := len(p.recs) / 2
		a, err := s.pageWrites(rs, page{recs: p.recs[:half]}, stamp)
		if err != nil {
			return nil, err
		}
		b, err := s.pageWrites(rs, page{recs: p.recs[half:]}, stamp)
		return append(a, b...), err
	}
	if len(ok) > 0 {
		doc, err := json.Marshal(ok)
		if err != nil {
			return nil, err
		}
		gz, err := gzipString(string(doc))
		if err != nil {
			return nil, fmt.Errorf("compress page %s keys: %w", suffix, err)
		}
		fx[attrOK] = &types.AttributeValueMemberB{Value: gz}
	}
	return []types.WriteRequest{{PutRequest: &types.PutRequest{Item: item}}, {PutRequest: &types.PutRequest{Item: fx}}}, nil
}

// pagesOut moves the pages of reqs (one call's) into one object when the
// write units that saves pass a PUT's price; it returns the object (nil
// when the pages stay inline).
func (s *Store) pagesOut(rs job.RecordSet, reqs []types.WriteRequest, stamp int64) (*pageObject, error) {
	var tok [6]byte
	if _, err := crand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("page object name: %w", err)
	}
	uri := blob.Join(s.objsBase, rs.JobID, "pages", strconv.FormatInt(stamp, 36)+"-"+hex.EncodeToString(tok[:])+".gz")
	type move struct {
		item, out map[string]types.AttributeValue
		body      []byte
	}
	var moves []move
	saved, size := 0, 0
	for _, w := range reqs {
		item := w.PutRequest.Item
		body, ok := item[attrRecs].(*types.AttributeValueMemberB)
		if !ok || !strings.HasPrefix(item[attrSK].(*types.AttributeValueMemberS).Value, skPagePrefix) {
			continue
		}
		out := maps.Clone(item)
		delete(out, attrRecs)
		out[attrRef] = str(uri)
		out[attrOff] = &types.AttributeValueMemberN{Value: strconv.Itoa(size)}
		out[attrLen] = &types.AttributeValueMemberN{Value: strconv.Itoa(len(body.Value))}
		if d := writeUnits(ItemSize(item)) - writeUnits(ItemSize(out)); d > 0 {
			moves = append(moves, move{item, out, body.Value})
			saved += d
			size += len(body.Value)
		}
	}
	if saved <= PagePutUnits {
		return nil, nil
	}
	o := &pageObject{uri: uri, body: make([]byte, 0, size)}
	for _, m := range moves {
		o.body = append(o.body, m.body...)
		maps.Copy(m.item, m.out)
		delete(m.item, attrRecs)
	}
	return o, nil
}

func pageItem(pk types.AttributeValue, sk string, recs []encodedRecord, stamp int64) (map[string]types.AttributeValue, error) {
	doc := pageBuffers.Get().(*bytes.Buffer)
	defer pageBuffers.Put(doc)
	doc.Reset()
	doc.WriteByte('[')
	var exp int64
	for i, e := range recs {
		if i > 0 {
			doc.WriteByte(',')
		}
		doc.Write(e.doc)
		// The item lives as long as its longest-lived record; reads hide
		// each record at its own expiry.
		if e.exp == 0 || exp == -1 {
			exp = -1
		} else {
			exp = max(exp, e.exp)
		}
	}
	doc.WriteByte(']')
	gz, err := gzipBytes(doc.Bytes())
	if err != nil {
		return nil, fmt.Errorf("compress page %s: %w", sk, err)
	}
	m := map[string]types.AttributeValue{
		attrPK: pk, attrSK: str(sk),
		attrRecs:  &types.AttributeValueMemberB{Value: gz},
		attrStamp: &types.AttributeValueMemberN{Value: strconv.FormatInt(stamp, 10)},
		attrCount: &types.AttributeValueMemberN{Value: strconv.Itoa(len(recs))},
	}
	if exp > 0 {
		m[attrExpires] = &types.AttributeValueMemberN{Value: strconv.FormatInt(exp, 10)}
	}
	return m, nil
}

// putPages implements PutRecords for a packed set.
func (s *Store) putPages(ctx context.Context, rs job.RecordSet, recs []job.Record) error {
	reqs, obj, err := s.pageSet(rs, recs)
	if err != nil {
		return fmt.Errorf("put records of job %s: %w", rs.JobID, err)
	}
	// The object first: an item is written only once its records are there.
	if obj != nil {
		if _, err := s.objs.Put(ctx, obj.uri, bytes.NewReader(obj.body), "application/octet-stream"); err != nil {
			return fmt.Errorf("put records of job %s: pages %s: %w", rs.JobID, obj.uri, err)
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxAhead)
	// A call of a few thousand records is several batches: write them at
	// once (the items are independent keyed overwrites).
	errs := make([]error, (len(reqs)+batchSize-1)/batchSize)
	for i := range errs {
		start := i * batchSize
		end := min(start+batchSize, len(reqs))
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = s.writeBatch(ctx, reqs[start:end], 0)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("put records of job %s: %w", rs.JobID, err)
	}
	return nil
}

// PageWrites are the item writes PutRecords makes for recs (checked and
// deduped) of a packed set in s.
func PageWrites(s *Store, rs job.RecordSet, recs []job.Record) ([]types.WriteRequest, error) {
	reqs, _, err := s.pageSet(rs, recs)
	return reqs, err
}

// pageSet is the items and the object (nil: none) PutRecords writes for recs.
func (s *Store) pageSet(rs job.RecordSet, recs []job.Record) ([]types.WriteRequest, *pageObject, error) {
	stamp := s.stamp()
	maxRaw := pageMaxRaw
	if s.spillPages {
		maxRaw = pageMaxRawObject
	}
	var reqs []types.WriteRequest
	err := packRecords(rs, recs, maxRaw, func(p page) error {
		w, err := s.pageWrites(rs, p, stamp)
		reqs = append(reqs, w...)
		return err
	})
	if err != nil || !s.spillPages {
		return reqs, nil, err
	}
	obj, err := s.pagesOut(rs, reqs, stamp)
	return reqs, obj, err
}

// stampedRecord is a record read from a page, with the page's stamp.
type stampedRecord struct {
	job.Record
	stamp int64
}

// decodePage reads a page item's records; live drops the expired ones.
func decodePage(item map[string]types.AttributeValue) ([]stampedRecord, error) {
	b, ok := item[attrRecs].(*types.AttributeValueMemberB)
	if !ok {
		return nil, fmt.Errorf("dynamostore: page item %v has no records", item[attrSK])
	}
	doc, err := gunzipLimit(b.Value, maxPageDoc)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: decompress page %v: %w", item[attrSK], err)
	}
	recs, err := storeutil.DecodeRecords([]byte(doc))
	if err != nil {
		return nil, fmt.Errorf("dynamostore: page %v: %w", item[attrSK], err)
	}
	var stamp int64
	if n, ok := item[attrStamp].(*types.AttributeValueMemberN); ok {
		stamp, _ = strconv.ParseInt(n.Value, 10, 64)
	}
	out := make([]stampedRecord, len(recs), len(recs)+pageMaxRecords)
	for i, r := range recs {
		out[i] = stampedRecord{Record: r, stamp: stamp}
	}
	if ok, has := item[attrOK].(*types.AttributeValueMemberB); has {
		doc, err := gunzipLimit(ok.Value, maxPageDoc)
		if err != nil {
			return nil, fmt.Errorf("dynamostore: decompress page keys %v: %w", item[attrSK], err)
		}
		var keys []okKey
		if err := json.Unmarshal([]byte(doc), &keys); err != nil {
			return nil, fmt.Errorf("dynamostore: page keys %v: %w", item[attrSK], err)
		}
		for _, k := range keys {
			// Not failed: it hides older failures and is never listed as one.
			out = append(out, stampedRecord{Record: job.Record{ID: k.I, Ordinal: k.O, Status: job.RecordSucceeded}, stamp: stamp})
		}
	}
	return out, nil
}

// maxPageDoc bounds a page's inflation: pageMaxRawObject, plus one record
// of the largest inline output with its JSON escaping.
const maxPageDoc = pageMaxRawObject + 8*job.MaxInlineOutputBytes

// mergePages is the records of a range's pages, each key's newest copy,
// live at now, sorted by key.
func mergePages(items []map[string]types.AttributeValue, now int64) ([]job.Record, error) {
	newest := map[job.RecordKey]stampedRecord{}
	for _, it := range items {
		recs, err := decodePage(it)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if old, ok := newest[r.Key()]; !ok || r.stamp >= old.stamp {
				newest[r.Key()] = r
			}
		}
	}
	out := make([]job.Record, 0, len(newest))
	for _, r := range newest {
		if storeutil.Live(storeutil.ExpiresUnix(r.ExpiresAt), time.Unix(now, 0)) {
			out = append(out, r.Record)
		}
	}
	slices.SortFunc(out, func(a, b job.Record) int { return compareKeys(a.Key(), b.Key()) })
	return out, nil
}

// rangeItems reads every live page (or companion, by prefix) of range r,
// once per request that carries a store.ReadCache.
func (s *Store) rangeItems(ctx context.Context, rs job.RecordSet, prefix string, r int) ([]map[string]types.AttributeValue, error) {
	cache := store.ReadCacheOf(ctx)
	key := "dynamostore/" + s.table + "/" + rs.JobID + "/" + prefix + strconv.Itoa(r)
	if v, ok := cache.Load(key); ok {
		return v.([]map[string]types.AttributeValue), nil
	}
	items, err := s.queryN(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("PK = :pk AND SK BETWEEN :lo AND :hi"),
		FilterExpression:          aws.String(liveFilter),
		ExpressionAttributeNames:  map[string]string{"#exp": attrExpires},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(recordPK(rs.JobID, rangeShard(rs, r))), ":lo": str(prefix + ord10(r*pageSpan)), ":hi": str(prefix + ord10((r+1)*pageSpan)), ":now": s.nowValue()},
		// A reader that saw the job finish must see every record it wrote.
		ConsistentRead: aws.Bool(true),
	}, nil, maxRangeItems)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: read range %d of job %s: %w", r, rs.JobID, err)
	}
	if err := s.fetchPages(ctx, items); err != nil {
		return nil, fmt.Errorf("dynamostore: read range %d of job %s: %w", r, rs.JobID, err)
	}
	cache.Store(key, items)
	return items, nil
}

// fetchPages reads the records of the items kept in object storage into
// their attrRecs, at once.
func (s *Store) fetchPages(ctx context.Context, items []map[string]types.AttributeValue) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxAhead)
	errs := make([]error, len(items))
	for i, it := range items {
		ref, ok := it[attrRef].(*types.AttributeValueMemberS)
		if !ok {
			continue
		}
		if s.objs == nil {
			errs[i] = fmt.Errorf("page %v keeps its records at %s, and no object storage is configured", it[attrSK], ref.Value)
			continue
		}
		off, oerr := numAttr(it[attrOff])
		n, nerr := numAttr(it[attrLen])
		if oerr != nil || nerr != nil || off < 0 || n <= 0 || n > maxPageObject {
			errs[i] = fmt.Errorf("page %v: %d bytes at %d of %s, want 1 to %d", it[attrSK], n, off, ref.Value, maxPageObject)
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			body, err := s.readAt(ctx, ref.Value, off, int(n))
			if err == nil && int64(len(body)) != n {
				err = fmt.Errorf("%s: %d bytes at %d, want %d", ref.Value, len(body), off, n)
			}
			if err != nil {
				// The lifecycle rule outlasts every item's TTL: a missing
				// object is a fault, not an expiry.
				errs[i] = fmt.Errorf("page %v: %w", it[attrSK], err)
				return
			}
			it[attrRecs] = &types.AttributeValueMemberB{Value: body}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// maxPageObject bounds a page read from an object: maxPageDoc does not
// compress into more than itself and gzip's framing.
const maxPageObject = maxPageDoc + 64<<10

// maxRangeItems is "all of them": a range's pages are read whole, however
// many writes of other groupings added (each Query page is 1 MB at most).
const maxRangeItems = math.MaxInt32

// nextRange is the least range at or after from that has a live item of
// prefix in any shard (-1 when none): every shard's first such key, at once.
func (s *Store) nextRange(ctx context.Context, rs job.RecordSet, prefix string, from int) (int, error) {
	shards := storeutil.Shards(rs.Shards)
	found := make([]int, shards)
	errs := make([]error, shards)
	var wg sync.WaitGroup
	for sh := range shards {
		wg.Go(func() {
			found[sh] = -1
			items, err := s.queryN(ctx, &dynamodb.QueryInput{
				TableName:                 aws.String(s.table),
				KeyConditionExpression:    aws.String("PK = :pk AND SK BETWEEN :lo AND :hi"),
				FilterExpression:          aws.String(liveFilter),
				ProjectionExpression:      aws.String("SK"),
				ExpressionAttributeNames:  map[string]string{"#exp": attrExpires},
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(recordPK(rs.JobID, sh)), ":lo": str(prefix + ord10(from*pageSpan)), ":hi": str(prefixEnd(prefix)), ":now": s.nowValue()},
				ConsistentRead:            aws.Bool(true),
			}, nil, 1)
			if err != nil {
				errs[sh] = fmt.Errorf("dynamostore: find pages of job %s shard %d: %w", rs.JobID, sh, err)
				return
			}
			if len(items) == 1 {
				sk := keyOf(items[0], attrSK)[attrSK]
				o, err := strconv.Atoi(sk[len(prefix) : len(prefix)+10])
				if err != nil {
					errs[sh] = fmt.Errorf("dynamostore: page key %q: %w", sk, err)
					return
				}
				found[sh] = rangeOf(o)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	best := -1
	for _, r := range found {
		if r >= 0 && (best < 0 || r < best) {
			best = r
		}
	}
	return best, nil
}

// packedCursor is the key of a page's last record.
type packedCursor struct {
	Job     string `json:"j"`
	Ordinal int    `json:"o"`
	ID      string `json:"i"`
}

// listPages implements ListRecords for a packed set: range after range from
// the cursor's, each read whole (its pages, or for failed records its
// companions), the next ranges read ahead together, an empty stretch skipped
// by asking every shard for its next key.
func (s *Store) listPages(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error) {
	limit := storeutil.PageLimit(q.Limit)
	prefix := skPagePrefix
	if q.Status == job.RecordFailed {
		prefix = skFailPrefix
	}
	var after *job.RecordKey
	r := 0
	if q.Cursor != "" {
		var c packedCursor
		if err := storeutil.DecodeCursor(q.Cursor, &c); err != nil {
			return nil, "", err
		}
		if c.Job != rs.JobID || c.ID == "" || c.Ordinal < 0 || c.Ordinal > storeutil.MaxOrdinal {
			return nil, "", fmt.Errorf("%w: not a cursor of this listing", store.ErrBadCursor)
		}
		after = &job.RecordKey{ID: c.ID, Ordinal: c.Ordinal}
		r = rangeOf(c.Ordinal)
	}
	now := s.now().Unix()
	var out []job.Record
	ahead := 1
	for len(out) <= limit {
		// Read ranges r..r+ahead-1 at once (one query each, in their shards).
		got := make([][]map[string]types.AttributeValue, ahead)
		errs := make([]error, ahead)
		var wg sync.WaitGroup
		for i := range ahead {
			wg.Go(func() { got[i], errs[i] = s.rangeItems(ctx, rs, prefix, r+i) })
		}
		wg.Wait()
		empty := true
		for i := range ahead {
			if errs[i] != nil {
				return nil, "", errs[i]
			}
			if len(got[i]) == 0 {
				continue
			}
			empty = false
			recs, err := mergePages(got[i], now)
			if err != nil {
				return nil, "", err
			}
			for _, rec := range recs {
				if after != nil && compareKeys(rec.Key(), *after) <= 0 || q.Status != "" && rec.Status != q.Status {
					continue
				}
				out = append(out, rec)
			}
			if len(out) > limit {
				break
			}
		}
		if len(out) > limit {
			break
		}
		next := r + ahead
		if empty {
			n, err := s.nextRange(ctx, rs, prefix, next)
			if err != nil {
				return nil, "", err
			}
			if n < 0 {
				break
			}
			next, ahead = n, 1
		} else {
			// Ranges short of the page: read more of them at once next time.
			ahead = min(2*ahead, maxAhead)
		}
		r = next
	}
	if len(out) <= limit {
		return out, "", nil
	}
	out = out[:limit]
	last := out[limit-1]
	next, err := storeutil.EncodeCursor(packedCursor{Job: rs.JobID, Ordinal: last.Ordinal, ID: last.ID})
	return out, next, err
}

// maxAhead bounds the ranges a listing reads at once.
const maxAhead = 8

// getPages implements GetRecords for a packed set: each asked range read
// whole, the ranges at once.
func (s *Store) getPages(ctx context.Context, rs job.RecordSet, want []job.RecordKey) ([]job.Record, error) {
	byRange := map[int]map[job.RecordKey]bool{}
	for _, k := range want {
		if k.Ordinal < 0 {
			continue
		}
		r := rangeOf(k.Ordinal)
		if byRange[r] == nil {
			byRange[r] = map[job.RecordKey]bool{}
		}
		byRange[r][job.RecordKey{ID: k.ID, Ordinal: k.Ordinal}] = true
	}
	now := s.now().Unix()
	var mu sync.Mutex
	var out []job.Record
	var firstErr error
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxAhead)
	for r, keys := range byRange {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			items, err := s.rangeItems(ctx, rs, skPagePrefix, r)
			var recs []job.Record
			if err == nil {
				recs, err = mergePages(items, now)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmp.Or(firstErr, err)
				return
			}
			for _, rec := range recs {
				if keys[rec.Key()] {
					out = append(out, rec)
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// PageItem is one item PutRecords writes for a packed set: its sort key,
// billed size, range, whether it is a companion (failed records), and its
// records' bytes in the call's object when they are there (0: inline).
type PageItem struct {
	SK        string
	Size      int
	Range     int
	Companion bool
	Object    int
}

// PageItems are the items PutRecords writes for recs in a packed set, by a
// store with object storage (objects) or without.
func PageItems(rs job.RecordSet, recs []job.Record, objects bool) ([]PageItem, error) {
	s := &Store{now: time.Now, spillPages: objects, objsBase: pricedBase}
	reqs, obj, err := s.pageSet(rs, storeutil.Dedupe(recs))
	if err != nil {
		return nil, err
	}
	out := make([]PageItem, len(reqs))
	for i, w := range reqs {
		item := w.PutRequest.Item
		sk := item[attrSK].(*types.AttributeValueMemberS).Value
		comp := strings.HasPrefix(sk, skFailPrefix)
		o, _ := strconv.Atoi(sk[len(skPagePrefix) : len(skPagePrefix)+10])
		out[i] = PageItem{SK: sk, Size: ItemSize(item), Range: rangeOf(o), Companion: comp}
		if _, ok := item[attrRef]; ok && obj != nil {
			n, _ := numAttr(item[attrLen])
			out[i].Object = int(n)
		}
	}
	return out, nil
}

// pricedBase is as long as a deployed store's object prefix (a data bucket
// named by stack, account and Region), so that priced items weigh the same.
const pricedBase = "s3://mcpbatch-databucket-0123456789ab-us-east-1/jobs/"

package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"
	"github.com/pgvector/pgvector-go"
)

// PGDB is what the pgvector adapter needs of a connection pool: a *sql.DB
// opened with lib/pq's "postgres" driver. database/sql and lib/pq rather than
// pgx: pgx registers every PostgreSQL type codec at init, about 3 MB more in
// each Lambda that links this adapter (mcp, ingest, ondemand), for the few
// column types used here (text, text[], int, boolean, timestamptz, jsonb and
// vectors sent and read as text).
type PGDB interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// PGVector is the Index adapter for PostgreSQL with the pgvector extension.
//
// Layout: one table per index (mbv_<hash>: key text primary key, embedding
// vector(dimension) — halfvec(dimension) above 2,000 dimensions, see
// pgColumn — metadata jsonb) plus a catalog table. A table per index
// because an HNSW index needs a column of one fixed dimension and one operator
// class per metric (vector_cosine_ops / vector_l2_ops); a shared table would need
// a partial expression index per index id, and DeleteIndex would be a large
// DELETE instead of a DROP TABLE.
type PGVector struct {
	db PGDB
	// EfSearch is hnsw.ef_search for queries (candidates kept while searching;
	// higher is slower and more exact). Default 400, never below 2k: recall@10
	// ≥ 0.95 even on full-rank data where pgvector's own default (40) gives 0.43
	// (BenchmarkPGVectorRecall).
	EfSearch int

	mu        sync.Mutex
	ready     bool
	iterative bool // pgvector ≥ 0.8: filtered HNSW scans continue until k rows
}

// NewPGVector returns the adapter; the extension and catalog table are created
// on first use (CREATE EXTENSION IF NOT EXISTS vector needs the privilege once).
func NewPGVector(db PGDB) *PGVector { return &PGVector{db: db, EfSearch: 400} }

var _ Index = (*PGVector)(nil)

// pgvector's HNSW index takes a vector column of at most 2,000 dimensions
// and a halfvec (half-precision) column of at most 4,000
// (https://github.com/pgvector/pgvector#hnsw, "Vectors with up to 2,000
// dimensions can be indexed", "halfvec - up to 4,000 dimensions", checked
// 2026-12-01). An index above 2,000 dimensions (Nova Multimodal Embeddings'
// 3,072) stores halfvec: its vectors come back rounded to half precision
// (about 3 significant digits), which leaves cosine and L2 rankings
// practically unchanged. Above 4,000 it is refused at creation.
const (
	pgMaxVectorDims  = 2000
	pgMaxHalfvecDims = 4000
)

// pgColumn is the column type and operator-class prefix of an index of dim
// dimensions.
func pgColumn(dim int) string {
	if dim > pgMaxVectorDims {
		return "halfvec"
	}
	return "vector"
}

const pgCatalog = "mcpbatch_vector_indexes"

func (p *PGVector) setup(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ready {
		return nil
	}
	stmts := []string{
		`CREATE EXTENSION IF NOT EXISTS vector`,
		`CREATE TABLE IF NOT EXISTS ` + pgCatalog + ` (
			physical text PRIMARY KEY,
			owner text NOT NULL,
			name text NOT NULL,
			model text NOT NULL,
			dimension int NOT NULL,
			metric text NOT NULL,
			non_filterable text[] NOT NULL DEFAULT '{}',
			filterable_keys text[] NOT NULL DEFAULT '{}',
			completed_jobs text[] NOT NULL DEFAULT '{}',
			created_at timestamptz NOT NULL,
			updated_at timestamptz NOT NULL)`,
		// Added after the first release: catalogs made before have no column.
		`ALTER TABLE ` + pgCatalog + ` ADD COLUMN IF NOT EXISTS normalize boolean`,
		`CREATE INDEX IF NOT EXISTS ` + pgCatalog + `_owner ON ` + pgCatalog + ` (owner, name)`,
	}
	for _, s := range stmts {
		if _, err := p.db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("pgvector: setup: %w", err)
		}
	}
	var version string
	if err := p.db.QueryRowContext(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'vector'`).Scan(&version); err != nil {
		return fmt.Errorf("pgvector: extension version: %w", err)
	}
	var major, minor int
	fmt.Sscanf(version, "%d.%d", &major, &minor)
	p.iterative = major > 0 || minor >= 8
	p.ready = true
	return nil
}

func tableOf(phys string) string {
	return pq.QuoteIdentifier("mbv_" + strings.TrimPrefix(phys, "mb-"))
}

const pgRecordCols = `owner, name, model, dimension, metric, normalize, non_filterable, filterable_keys, completed_jobs, created_at, updated_at`

// scanInfo reads a catalog row selected with pgRecordCols (after any
// columns in before).
func scanInfo(row interface{ Scan(...any) error }, before ...any) (Info, error) {
	var i Info
	var metric string
	err := row.Scan(append(before, &i.Owner, &i.Name, &i.Model, &i.Dimension, &metric, &i.Normalize,
		pq.Array(&i.NonFilterable), pq.Array(&i.FilterableKeys), pq.Array(&i.CompletedJobs), &i.CreatedAt, &i.UpdatedAt)...)
	i.Metric = Metric(metric)
	return normalise(i), err
}

func (p *PGVector) load(ctx context.Context, ref Ref) (Info, string, error) {
	if err := CheckRef(ref); err != nil {
		return Info{}, "", err
	}
	if err := p.setup(ctx); err != nil {
		return Info{}, "", err
	}
	phys := PhysicalName(ref)
	i, err := scanInfo(p.db.QueryRowContext(ctx, `SELECT `+pgRecordCols+` FROM `+pgCatalog+` WHERE physical = $1 AND owner = $2 AND name = $3`, phys, ref.Owner, ref.Name))
	if errors.Is(err, sql.ErrNoRows) {
		return Info{}, phys, fmt.Errorf("%w: %q", ErrNotFound, ref.Name)
	}
	if err != nil {
		return Info{}, "", fmt.Errorf("pgvector: read catalog of %q: %w", ref.Name, err)
	}
	return i, phys, nil
}

func (p *PGVector) count(ctx context.Context, phys string, i *Info) error {
	return p.db.QueryRowContext(ctx, `SELECT count(*) FROM `+tableOf(phys)).Scan(&i.Vectors)
}

// Open implements Index.
func (p *PGVector) Open(ctx context.Context, ref Ref, spec Spec) (Info, error) {
	if err := CheckSpec(spec); err != nil {
		return Info{}, err
	}
	if spec.Dimension > pgMaxHalfvecDims {
		return Info{}, invalid("dimension: %d is over what pgvector can index with HNSW (vector up to %d dimensions, halfvec up to %d); choose a smaller dimension for the model, or use the S3 Vectors index", spec.Dimension, pgMaxVectorDims, pgMaxHalfvecDims)
	}
	if i, phys, err := p.load(ctx, ref); err == nil {
		if err := CheckMatch(i, spec); err != nil {
			return i, err
		}
		return i, p.count(ctx, phys, &i)
	} else if !errors.Is(err, ErrNotFound) {
		return Info{}, err
	}
	phys := PhysicalName(ref)
	col := pgColumn(spec.Dimension)
	ops := col + "_cosine_ops"
	if spec.Metric == Euclidean {
		ops = col + "_l2_ops"
	}
	tbl := tableOf(phys)
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return Info{}, fmt.Errorf("pgvector: create %q: %w", ref.Name, err)
	}
	defer tx.Rollback()
	var held int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+pgCatalog+` WHERE owner = $1`, ref.Owner).Scan(&held); err != nil {
		return Info{}, fmt.Errorf("pgvector: create %q: count the owner's indexes: %w", ref.Name, err)
	}
	if held >= MaxIndexesPerOwner {
		return Info{}, quotaError(ref, held)
	}
	now := time.Now().UTC()
	res, err := tx.ExecContext(ctx, `INSERT INTO `+pgCatalog+` (physical, `+pgRecordCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,'{}','{}',$9,$9) ON CONFLICT (physical) DO NOTHING`,
		phys, ref.Owner, ref.Name, spec.Model, spec.Dimension, string(spec.Metric), spec.Normalize, pq.Array(nonNil(spec.NonFilterable)), now)
	if err != nil {
		return Info{}, fmt.Errorf("pgvector: create %q: %w", ref.Name, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return Info{}, fmt.Errorf("pgvector: create %q: %w", ref.Name, err)
	} else if n == 0 { // created concurrently: compare with that one
		tx.Rollback()
		i, _, err := p.load(ctx, ref)
		if err != nil {
			return Info{}, err
		}
		return i, CheckMatch(i, spec)
	}
	for _, s := range []string{
		fmt.Sprintf(`CREATE TABLE %s (key text PRIMARY KEY, embedding %s(%d) NOT NULL, metadata jsonb NOT NULL DEFAULT '{}')`, tbl, col, spec.Dimension),
		fmt.Sprintf(`CREATE INDEX ON %s USING hnsw (embedding %s)`, tbl, ops),
	} {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return Info{}, fmt.Errorf("pgvector: create %q: %w", ref.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return Info{}, fmt.Errorf("pgvector: create %q: %w", ref.Name, err)
	}
	i, _, err := p.load(ctx, ref)
	return i, err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Describe implements Index.
func (p *PGVector) Describe(ctx context.Context, ref Ref) (Info, error) {
	i, phys, err := p.load(ctx, ref)
	if err != nil {
		return i, err
	}
	return i, p.count(ctx, phys, &i)
}

// List implements Index.
func (p *PGVector) List(ctx context.Context, owner string) ([]Info, error) {
	if err := p.setup(ctx); err != nil {
		return nil, err
	}
	rows, err := p.db.QueryContext(ctx, `SELECT physical, `+pgRecordCols+` FROM `+pgCatalog+` WHERE owner = $1 ORDER BY name`, owner)
	if err != nil {
		return nil, fmt.Errorf("pgvector: list: %w", err)
	}
	var out []Info
	var physs []string
	for rows.Next() {
		var phys string
		i, err := scanInfo(rows, &phys)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("pgvector: list: %w", err)
		}
		out = append(out, i)
		physs = append(physs, phys)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgvector: list: %w", err)
	}
	for n := range out {
		if err := p.count(ctx, physs[n], &out[n]); err != nil {
			return nil, fmt.Errorf("pgvector: list: count %q: %w", out[n].Name, err)
		}
		// normalise empty arrays and times as load does
		out[n] = normalise(out[n])
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

func normalise(i Info) Info {
	i.CreatedAt, i.UpdatedAt = i.CreatedAt.UTC(), i.UpdatedAt.UTC()
	if len(i.NonFilterable) == 0 {
		i.NonFilterable = nil
	}
	if len(i.FilterableKeys) == 0 {
		i.FilterableKeys = nil
	}
	if len(i.CompletedJobs) == 0 {
		i.CompletedJobs = nil
	}
	return i
}

// DeleteIndex implements Index.
func (p *PGVector) DeleteIndex(ctx context.Context, ref Ref) error {
	_, phys, err := p.load(ctx, ref)
	if err != nil {
		return err
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("pgvector: delete %q: %w", ref.Name, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+tableOf(phys)); err != nil {
		return fmt.Errorf("pgvector: delete %q: %w", ref.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+pgCatalog+` WHERE physical = $1`, phys); err != nil {
		return fmt.Errorf("pgvector: delete %q: %w", ref.Name, err)
	}
	return tx.Commit()
}

// Put implements Index: validated in full, then written in batches of ≤ 500
// inside one transaction, so a failed Put leaves nothing half-written.
func (p *PGVector) Put(ctx context.Context, ref Ref, vecs []Vector) error {
	info, phys, err := p.load(ctx, ref)
	if err != nil {
		return err
	}
	if len(vecs) == 0 {
		return nil
	}
	filterable, err := CheckVectors(info, vecs)
	if err != nil {
		return err
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("pgvector: put into %q: %w", ref.Name, err)
	}
	defer tx.Rollback()
	q := `INSERT INTO ` + tableOf(phys) + ` (key, embedding, metadata)
		SELECT k, e::` + pgColumn(info.Dimension) + `, m::jsonb FROM unnest($1::text[], $2::text[], $3::text[]) AS u(k, e, m)
		ON CONFLICT (key) DO UPDATE SET embedding = excluded.embedding, metadata = excluded.metadata`
	for _, batch := range Batches(vecs) {
		keys := make([]string, len(batch))
		embs := make([]string, len(batch))
		metas := make([]string, len(batch))
		for i, v := range batch {
			keys[i] = v.Key
			embs[i] = pgvector.NewVector(v.Data).String()
			m := v.Metadata
			if m == nil {
				m = map[string]any{}
			}
			b, err := json.Marshal(m)
			if err != nil {
				return invalid("vector %q: metadata: %v", v.Key, err)
			}
			metas[i] = string(b)
		}
		if _, err := tx.ExecContext(ctx, q, pq.Array(keys), pq.Array(embs), pq.Array(metas)); err != nil {
			return fmt.Errorf("pgvector: put %d vectors into %q: %w", len(batch), ref.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+pgCatalog+` SET filterable_keys = ARRAY(SELECT DISTINCT unnest(filterable_keys || $2::text[]) ORDER BY 1), updated_at = $3 WHERE physical = $1`,
		phys, pq.Array(nonNil(filterable)), time.Now().UTC()); err != nil {
		return fmt.Errorf("pgvector: put into %q: %w", ref.Name, err)
	}
	return tx.Commit()
}

// Get implements Index.
func (p *PGVector) Get(ctx context.Context, ref Ref, keys []string) ([]Vector, error) {
	_, phys, err := p.load(ctx, ref)
	if err != nil {
		return nil, err
	}
	rows, err := p.db.QueryContext(ctx, `SELECT key, embedding::text, metadata::text FROM `+tableOf(phys)+` WHERE key = ANY($1::text[]) ORDER BY key`, pq.Array(nonNil(keys)))
	if err != nil {
		return nil, fmt.Errorf("pgvector: get from %q: %w", ref.Name, err)
	}
	defer rows.Close()
	var out []Vector
	for rows.Next() {
		var key, emb, meta string
		if err := rows.Scan(&key, &emb, &meta); err != nil {
			return nil, fmt.Errorf("pgvector: get from %q: %w", ref.Name, err)
		}
		v, err := decodeRow(key, emb, meta)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func decodeRow(key, emb, meta string) (Vector, error) {
	var pv pgvector.Vector
	if emb != "" {
		if err := pv.Parse(emb); err != nil {
			return Vector{}, fmt.Errorf("pgvector: vector %q: %w", key, err)
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(meta), &m); err != nil {
		return Vector{}, fmt.Errorf("pgvector: metadata of %q: %w", key, err)
	}
	if len(m) == 0 {
		m = nil
	}
	return Vector{Key: key, Data: pv.Slice(), Metadata: m}, nil
}

// Delete implements Index; absent keys are ignored.
func (p *PGVector) Delete(ctx context.Context, ref Ref, keys []string) error {
	_, phys, err := p.load(ctx, ref)
	if err != nil {
		return err
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("pgvector: delete from %q: %w", ref.Name, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+tableOf(phys)+` WHERE key = ANY($1::text[])`, pq.Array(nonNil(keys))); err != nil {
		return fmt.Errorf("pgvector: delete from %q: %w", ref.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+pgCatalog+` SET updated_at = $2 WHERE physical = $1`, phys, time.Now().UTC()); err != nil {
		return fmt.Errorf("pgvector: delete from %q: %w", ref.Name, err)
	}
	return tx.Commit()
}

// Query implements Index through the HNSW index (approximate, like S3 Vectors).
func (p *PGVector) Query(ctx context.Context, ref Ref, q Query) ([]Match, error) {
	info, phys, err := p.load(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := CheckTopK(q.K); err != nil {
		return nil, err
	}
	if len(q.Vector) != info.Dimension {
		return nil, invalid("vector: dimension %d, index %q has dimension %d", len(q.Vector), ref.Name, info.Dimension)
	}
	conds, err := ParseFilter(info, q.Filter)
	if err != nil {
		return nil, err
	}
	op := "<=>"
	if info.Metric == Euclidean {
		op = "<->"
	}
	args := []any{pgvector.NewVector(q.Vector).String(), q.K}
	where := ""
	for _, c := range conds {
		var ors []string
		for _, v := range c.Values {
			b, _ := json.Marshal(v)
			args = append(args, c.Key, string(b))
			k, j := len(args)-1, len(args)
			// equal, or an element of a list value (as S3 Vectors matches lists)
			ors = append(ors, fmt.Sprintf("metadata -> $%d = $%d::jsonb OR metadata -> $%d @> jsonb_build_array($%d::jsonb)", k, j, k, j))
		}
		if where == "" {
			where = " WHERE "
		} else {
			where += " AND "
		}
		where += "(" + strings.Join(ors, " OR ") + ")"
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("pgvector: query %q: %w", ref.Name, err)
	}
	defer tx.Rollback()
	ef := max(p.EfSearch, 2*q.K)
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SET LOCAL hnsw.ef_search = %d`, min(ef, 1000))); err != nil {
		return nil, fmt.Errorf("pgvector: query %q: %w", ref.Name, err)
	}
	if p.iterative && where != "" {
		if _, err := tx.ExecContext(ctx, `SET LOCAL hnsw.iterative_scan = relaxed_order`); err != nil {
			return nil, fmt.Errorf("pgvector: query %q: %w", ref.Name, err)
		}
	}
	stmt := fmt.Sprintf(`SELECT key, embedding %s $1::%s AS d, metadata::text FROM %s%s ORDER BY d LIMIT $2`, op, pgColumn(info.Dimension), tableOf(phys), where)
	rows, err := tx.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("pgvector: query %q: %w", ref.Name, err)
	}
	defer rows.Close()
	var out []Match
	for rows.Next() {
		var key, meta string
		var d float64
		if err := rows.Scan(&key, &d, &meta); err != nil {
			return nil, fmt.Errorf("pgvector: query %q: %w", ref.Name, err)
		}
		v, err := decodeRow(key, "", meta)
		if err != nil {
			return nil, err
		}
		out = append(out, Match{Key: key, Distance: d, Score: ScoreOf(info.Metric, d), Metadata: v.Metadata})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgvector: query %q: %w", ref.Name, err)
	}
	// relaxed_order may return rows slightly out of order
	sort.SliceStable(out, func(a, b int) bool { return out[a].Distance < out[b].Distance })
	return out, nil
}

// Commit implements Index.
func (p *PGVector) Commit(ctx context.Context, ref Ref, jobID string) error {
	if err := CheckJobID(jobID); err != nil {
		return err
	}
	_, phys, err := p.load(ctx, ref)
	if err != nil {
		return err
	}
	// in one statement, so concurrent commits of two jobs both stay
	q := `UPDATE ` + pgCatalog + ` SET updated_at = $4, completed_jobs = CASE
		WHEN $2 = ANY(completed_jobs) THEN completed_jobs
		ELSE (completed_jobs || $2::text)[greatest(cardinality(completed_jobs) + 2 - $3::int, 1):]
		END WHERE physical = $1`
	if _, err := p.db.ExecContext(ctx, q, phys, jobID, MaxCompletedJobs, time.Now().UTC()); err != nil {
		return fmt.Errorf("pgvector: commit %q into %q: %w", jobID, ref.Name, err)
	}
	return nil
}

package index_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // the "postgres" database/sql driver

	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/index/indextest"
)

// pgliteModules finds the PGlite packages .ci/pglite.sh installs: under
// $MCPBATCH_TOOLS/pglite, else the checkout's .tools/pglite.
func pgliteModules() (string, error) {
	var dirs []string
	if t := os.Getenv("MCPBATCH_TOOLS"); t != "" {
		dirs = append(dirs, filepath.Join(t, "pglite"))
	}
	dirs = append(dirs, filepath.Join("..", "..", ".tools", "pglite"))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "node_modules", "@electric-sql", "pglite-socket", "package.json")); err == nil {
			return filepath.Abs(d)
		}
	}
	return "", fmt.Errorf("PGlite not installed in %v (run bash .ci/pglite.sh or make tools)", dirs)
}

// startPGlite runs .ci/pglite/server.cjs (in-memory PostgreSQL + pgvector over
// the wire protocol) on a free loopback port and returns a pool of one
// connection to it (PGlite serves one connection at a time).
// Without node or PGlite the test skips, except under make test
// (MCPBATCH_E2E=1), where it fails.
func startPGlite(tb testing.TB) *sql.DB {
	tb.Helper()
	missing := func(err error) {
		if os.Getenv("MCPBATCH_E2E") == "1" {
			tb.Fatalf("pgvector tests need node and PGlite: %v", err)
		}
		tb.Skipf("pgvector tests skipped: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(fmt.Errorf("node not on PATH: %w", err))
	}
	mods, err := pgliteModules()
	if err != nil {
		missing(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", ".ci", "pglite", "server.cjs"))
	if err != nil {
		tb.Fatal(err)
	}
	// The port is picked by listening on :0 and closing; another test process
	// may take it before PGlite binds it (EADDRINUSE): try a few ports.
	var port int
	for attempt := 1; ; attempt++ {
		var err error
		if port, err = startPGliteOn(tb, node, script, mods); err == nil {
			break
		}
		if attempt == 5 {
			tb.Fatal(err)
		}
		tb.Logf("PGlite start attempt %d: %v; trying another port", attempt, err)
	}
	conn, err := sql.Open("postgres", fmt.Sprintf("postgres://postgres:postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	if err != nil {
		tb.Fatalf("connect to PGlite: %v", err)
	}
	conn.SetMaxOpenConns(1)
	if err := conn.PingContext(context.Background()); err != nil {
		tb.Fatalf("connect to PGlite: %v", err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn
}

// startPGliteOn starts the server on a free port and waits until it listens.
func startPGliteOn(tb testing.TB, node, script, mods string) (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, script, fmt.Sprint(port), mods)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start PGlite server: %v", err)
	}
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
	// The server prints one line once it listens; a probe connection is not
	// used because the server serves one client at a time.
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() && strings.HasPrefix(sc.Text(), "pglite listening") {
			ready <- nil
			io.Copy(io.Discard, out)
			return
		}
		ready <- fmt.Errorf("PGlite server exited before listening on port %d (%v)", port, sc.Err())
	}()
	select {
	case err := <-ready:
		if err != nil {
			stop()
			return 0, err
		}
	case <-time.After(60 * time.Second):
		stop()
		tb.Fatalf("PGlite server on port %d did not start within 60s", port)
	}
	tb.Cleanup(stop)
	return port, nil
}

func TestPGVectorContract(t *testing.T) {
	conn := startPGlite(t)
	indextest.Run(t, index.NewPGVector(conn))
}

// TestPGVectorUsesHNSW checks that a query is answered through the HNSW index
// with the metric's operator class, not a sequential scan.
func TestPGVectorUsesHNSW(t *testing.T) {
	conn := startPGlite(t)
	ctx := context.Background()
	ix := index.NewPGVector(conn)
	for _, c := range []struct {
		m   index.Metric
		ops string
	}{{index.Cosine, "vector_cosine_ops"}, {index.Euclidean, "vector_l2_ops"}} {
		ref := index.Ref{Owner: "o", Name: string(c.m)}
		if _, err := ix.Open(ctx, ref, index.Spec{Dimension: 3, Metric: c.m, Model: "m"}); err != nil {
			t.Fatal(err)
		}
		table := "mbv_" + index.PhysicalName(ref)[3:]
		var def string
		if err := conn.QueryRowContext(ctx, `SELECT indexdef FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE '%hnsw%'`, table).Scan(&def); err != nil {
			t.Fatalf("%s: no hnsw index on %s: %v", c.m, table, err)
		}
		if !strings.Contains(def, c.ops) {
			t.Fatalf("%s: index %q lacks %s", c.m, def, c.ops)
		}
		op := map[index.Metric]string{index.Cosine: "<=>", index.Euclidean: "<->"}[c.m]
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off")
		rows, err := tx.QueryContext(ctx, fmt.Sprintf(`EXPLAIN SELECT key, embedding %s '[1,0,0]'::vector AS d FROM %s ORDER BY d LIMIT 5`, op, table))
		if err != nil {
			t.Fatal(err)
		}
		plan := ""
		for rows.Next() {
			var line string
			_ = rows.Scan(&line)
			plan += line + "\n"
		}
		rows.Close()
		tx.Rollback()
		if !strings.Contains(plan, "Index Scan") {
			t.Fatalf("%s: plan does not use the index:\n%s", c.m, plan)
		}
	}
}

// pgvector's HNSW index stops at 2,000 dimensions for vector: larger indexes
// (Nova Multimodal Embeddings' 3,072) are stored as halfvec, indexed with the
// halfvec operator classes and queried through the index; above 4,000 the
// index is refused at creation, naming the limit.
func TestPGVectorDimensions(t *testing.T) {
	conn := startPGlite(t)
	ctx := context.Background()
	ix := index.NewPGVector(conn)
	for _, tc := range []struct {
		dim    int
		metric index.Metric
		col    string // "" refused
		ops    string
	}{
		{2000, index.Cosine, "vector", "vector_cosine_ops"},
		{2001, index.Euclidean, "halfvec", "halfvec_l2_ops"},
		{3072, index.Cosine, "halfvec", "halfvec_cosine_ops"},
		{4000, index.Cosine, "halfvec", "halfvec_cosine_ops"},
		{4001, index.Cosine, "", ""},
		{4096, index.Euclidean, "", ""},
	} {
		t.Run(fmt.Sprint(tc.dim), func(t *testing.T) {
			ref := index.Ref{Owner: "o", Name: fmt.Sprintf("d%d", tc.dim)}
			_, err := ix.Open(ctx, ref, index.Spec{Dimension: tc.dim, Metric: tc.metric, Model: "m"})
			if tc.col == "" {
				if !errors.Is(err, index.ErrInvalid) || !strings.Contains(err.Error(), "halfvec up to 4000") {
					t.Fatalf("err %v, want ErrInvalid naming the halfvec limit", err)
				}
				if _, err := ix.Describe(ctx, ref); !errors.Is(err, index.ErrNotFound) {
					t.Fatalf("refused index exists: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			table := "mbv_" + index.PhysicalName(ref)[3:]
			var typ, def string
			if err := conn.QueryRowContext(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'embedding'`, table).Scan(&typ); err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRowContext(ctx, `SELECT indexdef FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE '%hnsw%'`, table).Scan(&def); err != nil {
				t.Fatalf("no hnsw index: %v", err)
			}
			if want := fmt.Sprintf("%s(%d)", tc.col, tc.dim); typ != want || !strings.Contains(def, tc.ops) {
				t.Fatalf("column %s index %q, want %s with %s", typ, def, want, tc.ops)
			}
			// Three vectors, each mostly along its own axis.
			vecs := make([]index.Vector, 3)
			for k := range vecs {
				v := make([]float32, tc.dim)
				for d := range v {
					v[d] = 0.001 * float32(d%7)
				}
				v[k*100] = 1
				vecs[k] = index.Vector{Key: fmt.Sprintf("k%d", k), Data: v}
			}
			if err := ix.Put(ctx, ref, vecs); err != nil {
				t.Fatal(err)
			}
			ms, err := ix.Query(ctx, ref, index.Query{Vector: vecs[2].Data, K: 3})
			if err != nil || len(ms) != 3 || ms[0].Key != "k2" {
				t.Fatalf("query = %+v, %v; want k2 first", ms, err)
			}
			got, err := ix.Get(ctx, ref, []string{"k1"})
			if err != nil || len(got) != 1 || len(got[0].Data) != tc.dim || math.Abs(float64(got[0].Data[100]-1)) > 1e-3 || math.Abs(float64(got[0].Data[6]-0.006)) > 1e-4 {
				t.Fatalf("get = %v, %v", len(got), err)
			}
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			_, _ = tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off")
			op := map[index.Metric]string{index.Cosine: "<=>", index.Euclidean: "<->"}[tc.metric]
			var plan strings.Builder
			rows, err := tx.QueryContext(ctx, fmt.Sprintf(`EXPLAIN SELECT key FROM %s ORDER BY embedding %s (SELECT embedding FROM %s WHERE key = 'k0') LIMIT 2`, table, op, table))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var line string
				_ = rows.Scan(&line)
				plan.WriteString(line + "\n")
			}
			rows.Close()
			if !strings.Contains(plan.String(), "Index Scan") {
				t.Fatalf("plan does not use the HNSW index:\n%s", plan.String())
			}
		})
	}
}

package index_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
// the wire protocol) on a free loopback port and returns a connection to it.
// Without node or PGlite the test skips, except under make test
// (MCPBATCH_E2E=1), where it fails.
func startPGlite(tb testing.TB) *pgx.Conn {
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
	tb.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
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
		ready <- fmt.Errorf("PGlite server exited before listening (%v)", sc.Err())
	}()
	select {
	case err := <-ready:
		if err != nil {
			tb.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		tb.Fatalf("PGlite server on port %d did not start within 60s", port)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres:postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	if err != nil {
		tb.Fatalf("connect to PGlite: %v", err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
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
		if err := conn.QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE '%hnsw%'`, table).Scan(&def); err != nil {
			t.Fatalf("%s: no hnsw index on %s: %v", c.m, table, err)
		}
		if !strings.Contains(def, c.ops) {
			t.Fatalf("%s: index %q lacks %s", c.m, def, c.ops)
		}
		op := map[index.Metric]string{index.Cosine: "<=>", index.Euclidean: "<->"}[c.m]
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
		rows, err := tx.Query(ctx, fmt.Sprintf(`EXPLAIN SELECT key, embedding %s '[1,0,0]'::vector AS d FROM %s ORDER BY d LIMIT 5`, op, table))
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
		tx.Rollback(ctx)
		if !strings.Contains(plan, "Index Scan") {
			t.Fatalf("%s: plan does not use the index:\n%s", c.m, plan)
		}
	}
}

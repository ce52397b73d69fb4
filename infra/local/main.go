// Command local runs the whole suite in one process for `make dev`: the MCP
// server on http://127.0.0.1:8787/mcp, SQLite and a folder for storage, and the
// Bedrock batch simulator reached by the real SDK client over HTTP.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/local"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8787", "listen address")
	dir := flag.String("dir", ".mcpbatch", "state folder (SQLite store, objects)")
	step := flag.Duration("sim-step", 2*time.Second, "simulated time between two Bedrock job statuses")
	failEvery := flag.Int("sim-fail-every", 10, "the simulator fails every Nth record (0: none)")
	auth := flag.String("auth", "token", "token: bearer API key (printed, and kept in <dir>/dev-token); none: no auth, every caller is local-dev")
	reconcileEvery := flag.Duration("reconcile-every", 10*time.Second, "time between two reconciler runs (Anthropic polling, lost events, quota queue)")
	flag.Parse()
	log := app.Logger()
	if err := run(*addr, *dir, *step, *failEvery, *auth, *reconcileEvery); err != nil {
		log.Error("make dev", "error", err)
		os.Exit(1)
	}
}

// run serves make dev; reconcileEvery is its reconciler period (the stack schedules every 5 minutes).
func run(addr, dir string, step time.Duration, failEvery int, auth string, reconcileEvery time.Duration) error {
	if err := checkAuthAddr(auth, addr); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := app.Logger()
	opts := local.Options{Dir: dir, StepDelay: step, FailEvery: failEvery, Log: log}
	var banner string
	switch auth {
	case "token":
		key, ta, err := local.DevToken(dir)
		if err != nil {
			return err
		}
		opts.Owner = ta.Owner
		banner = fmt.Sprintf("  auth: token (the deployed token mode): Authorization: Bearer %s\n"+
			"        the key is kept in %s\n", key, filepath.Join(dir, local.DevTokenFile))
	case "none":
		banner = "  auth: none (every caller is local-dev)\n"
	default:
		return fmt.Errorf("-auth %q: want token or none", auth)
	}
	l, err := local.New(ctx, opts)
	if err != nil {
		return err
	}
	defer l.Close()
	go l.RunReconciler(ctx, reconcileEvery)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	l.Uploads.SetBaseURL("http://" + ln.Addr().String())
	srv := &http.Server{Handler: l.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "mcpbatch dev: MCP server at http://%s/mcp\n"+
		"  events replay: POST http://%s/local/events (same auth as /mcp; loopback Host only, no browsers)\n"+
		"  Bedrock batch: SIMULATED (test double at %s; outputs are marked [simulated]; every %dth record fails)\n"+
		"  Anthropic Message Batches: SIMULATED (test double at %s)\n"+
		"  state: %s/\n%s", ln.Addr(), ln.Addr(), l.SimURL, failEvery, l.AnthropicURL, dir, banner)
	fmt.Fprintf(os.Stderr, "  Bedrock runtime (on-demand runs): SIMULATED (test double at %s)\n"+
		"  report pipelines: %d (run_pipeline starts one; notifications go to %s/notifications.jsonl)\n",
		l.Reports.RuntimeURL, len(l.Reports.Runner.Config.Pipelines), dir)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// checkAuthAddr refuses -auth none on an address other machines can reach:
// without auth every caller owns every local-dev job and may replay events.
func checkAuthAddr(auth, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: want host:port (e.g. 127.0.0.1:8787): %w", addr, err)
	}
	if auth != "none" {
		return nil
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("-auth none with -addr %q: without auth only a loopback address (127.0.0.1, localhost, [::1]) may listen; use -auth token to serve other machines", addr)
}

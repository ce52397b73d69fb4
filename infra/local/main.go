// Command local runs the whole suite in one process for `make dev`: the MCP
// server on http://127.0.0.1:8787/mcp, SQLite and a folder for storage, and the
// Bedrock batch simulator reached by the real SDK client over HTTP.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
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
	"github.com/mcpbatch/mcpbatch/shared/bus"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8787", "listen address")
	dir := flag.String("dir", ".mcpbatch", "state folder (SQLite store, objects)")
	step := flag.Duration("sim-step", 2*time.Second, "simulated time between two Bedrock job statuses")
	failEvery := flag.Int("sim-fail-every", 10, "the simulator fails every Nth record (0: none)")
	slow := flag.Int("sim-slow", 0, "the simulator's Bedrock jobs process this many records per step while in progress (0: all in one step); try a deadline")
	auth := flag.String("auth", "token", "token: bearer API key (printed, and kept in <dir>/dev-token); none: no auth, every caller is local-dev")
	reconcileEvery := flag.Duration("reconcile-every", 10*time.Second, "time between two reconciler runs (Anthropic polling, lost events, quota queue)")
	workers := flag.Int("validate-workers", local.DefaultFanoutWorkers, "validation units run at once for jobs over many files (the validation queue's concurrency in AWS)")
	keys := flag.String("keys", "", `token mode: a file of more API keys beside the dev key, as the deployed secret holds them ({"keys":[{"name","sha256"}]}); each name is an owner`)
	flag.Parse()
	log := app.Logger()
	if err := run(*addr, *dir, *step, *failEvery, *slow, *auth, *reconcileEvery, *keys, *workers); err != nil {
		log.Error("make dev", "error", err)
		os.Exit(1)
	}
}

// run serves make dev; reconcileEvery is its reconciler period (the stack
// schedules every 5 minutes), workers its validation queue's workers.
func run(addr, dir string, step time.Duration, failEvery, slow int, auth string, reconcileEvery time.Duration, keysFile string, workers int) error {
	if err := checkAuthAddr(auth, addr); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := app.Logger()
	opts := local.Options{Dir: dir, StepDelay: step, FailEvery: failEvery, SlowRecords: slow, Log: log,
		Fanout: local.FanoutOptions{Workers: workers}}
	var banner string
	switch auth {
	case "token":
		key, ta, err := local.DevToken(dir)
		if err != nil {
			return err
		}
		second, err := local.SecondDevToken(dir)
		if err != nil {
			return err
		}
		if keysFile != "" {
			if ta, err = withKeys(key, keysFile); err != nil {
				return err
			}
		}
		opts.Owner = ta.Owner
		banner = fmt.Sprintf("  auth: token (the deployed token mode): Authorization: Bearer %s\n"+
			"        the key is kept in %s\n"+
			"        a second key, another owner (try owner isolation): %s (in %s)\n",
			key, filepath.Join(dir, local.DevTokenFile), second, filepath.Join(dir, local.SecondDevTokenFile))
	case "none":
		if keysFile != "" {
			return fmt.Errorf("-keys %s: API keys need -auth token", keysFile)
		}
		banner = "  auth: none (every caller is local-dev)\n"
	default:
		return fmt.Errorf("-auth %q: want token or none", auth)
	}
	l, err := local.New(ctx, opts)
	if err != nil {
		return err
	}
	defer l.Close()
	if _, err := resumeOnDemand(ctx, l.Service, log); err != nil {
		return err
	}
	go l.RunReconciler(ctx, reconcileEvery)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	l.Uploads.SetBaseURL("http://" + ln.Addr().String())
	// Requests get a context shutdown cancels (http.Server.Shutdown alone waits for them).
	reqCtx, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	srv := &http.Server{Handler: l.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return reqCtx }}
	fmt.Fprintf(os.Stderr, "mcpbatch dev: MCP server at http://%s/mcp\n"+
		"  web console: http://%s/console (enter the same key as for /mcp)\n"+
		"  events replay: POST http://%s/local/events (same auth as /mcp; loopback Host only, no browsers)\n"+
		"  Bedrock batch: SIMULATED (test double at %s; outputs are marked [simulated]; every %dth record fails)\n"+
		"  Anthropic Message Batches: SIMULATED (test double at %s)\n"+
		"  state: %s/\n%s", ln.Addr(), ln.Addr(), ln.Addr(), l.SimURL, failEvery, l.AnthropicURL, dir, banner)
	fmt.Fprintf(os.Stderr, "  AWS Price List (model prices, read by the account refresh): SIMULATED (test double at %s)\n", l.PriceListURL)
	fmt.Fprintf(os.Stderr, "  Bedrock runtime (on-demand runs): SIMULATED (test double at %s)\n"+
		"  report pipelines: %d (run_pipeline starts one; notifications go to %s/notifications.jsonl)\n"+
		"  completion webhooks (notify.webhook): delivered for real, loopback allowed; get_webhook_secret gives each owner its secret (master in %s/%s)\n"+
		"  metrics: EMF lines in %s/metrics.emf.jsonl\n",
		l.Reports.RuntimeURL, len(l.Reports.Runner.Config.Pipelines), dir, dir, local.WebhookSecretFile, dir)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
	}
	return shutdownDev(srv, cancelRequests, l.Bus, log)
}

// shutdownDev stops make dev within shutdownGrace: it cancels in-flight requests
// and bus handlers (they return at their last checkpoint; resumeOnDemand picks
// on-demand runs up at the next start) and waits for both, bounded.
func shutdownDev(srv *http.Server, cancelRequests context.CancelFunc, b *bus.Local, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	cancelRequests()
	busErr := make(chan error, 1)
	go func() { busErr <- b.Shutdown(ctx) }()
	err := srv.Shutdown(ctx)
	if berr := <-busErr; berr != nil {
		log.Warn("make dev: bus handlers left running at exit", "error", berr)
	}
	return err
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

// shutdownGrace bounds Ctrl-C / SIGTERM: in-flight requests and bus handlers
// (an on-demand run backing off) are cancelled and given this long to return.
const shutdownGrace = 5 * time.Second

// resumeOnDemand restarts, from their checkpoints, the on-demand runs a
// previous make dev left in flight (stopped by Ctrl-C, or their run event
// dropped at shutdown). Nothing else republishes them: the reconciler polls
// Bedrock batch jobs by their provider ref, and an on-demand job has none.
// RunOnDemand is safe to call twice for a job, so a resume never double counts.
func resumeOnDemand(ctx context.Context, svc *graph.Graph, log *slog.Logger) (int, error) {
	// One page (the oldest 500 Bedrock jobs in flight) is plenty for a dev machine.
	jobs, err := svc.Core.Store.ListInFlight(ctx, job.ProviderBedrock, time.Now(), job.MaxPageSize)
	if err != nil {
		return 0, fmt.Errorf("resume on-demand runs: %w", err)
	}
	if len(jobs) == job.MaxPageSize {
		log.Warn("resume on-demand runs: more Bedrock jobs in flight than one scan reads; later ones resume at the next start", "scanned", len(jobs))
	}
	n := 0
	for _, j := range jobs {
		if j.Mode != job.ModeOnDemand || j.Status.Terminal() {
			continue
		}
		if err := svc.OnDemandRuns.ContinueOnDemand(ctx, j.ID); err != nil {
			return n, err
		}
		line := 0
		if j.OnDemand != nil {
			line = j.OnDemand.Line
		}
		log.Info("resuming on-demand run from its checkpoint", "job_id", j.ID, "status", j.Status, "checkpoint_line", line)
		n++
	}
	return n, nil
}

// withKeys is token auth accepting the dev key and the keys of a key file
// (the deployed secret's format), so make dev can tell several callers apart.
func withKeys(devKey, path string) (*mcpserver.TokenAuth, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-keys: %w", err)
	}
	keys, err := mcpserver.ParseTokenFile(raw)
	if err != nil {
		return nil, fmt.Errorf("-keys %s: %w", path, err)
	}
	for _, k := range keys {
		if k.Name == local.DevKeyName {
			return nil, fmt.Errorf("-keys %s: the name %q is the dev key's", path, k.Name)
		}
	}
	all := append([]mcpserver.TokenKey{{Name: local.DevKeyName, SHA256: mcpserver.HashToken(devKey)}}, keys...)
	return &mcpserver.TokenAuth{Load: mcpserver.StaticKeys(all...)}, nil
}

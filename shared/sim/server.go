package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// listener serves one simulator over HTTP on a loopback port, for the real SDK
// clients to reach through their endpoint override, until close.
type listener struct {
	mu     sync.Mutex
	srv    *http.Server
	closed bool
	wg     sync.WaitGroup
}

// listen serves h on addr (e.g. "127.0.0.1:0") and returns the base URL; banner
// is logged with it, so make dev's output says which simulator is where.
func (l *listener) listen(addr, name string, h http.Handler, log *slog.Logger, banner string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("%s: listen %s: %w", name, addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	l.mu.Lock()
	if l.closed || l.srv != nil {
		l.mu.Unlock()
		ln.Close()
		return "", fmt.Errorf("%s: closed or already listening", name)
	}
	l.srv = srv
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && log != nil {
			log.Error(name+": serve", "err", err)
		}
	}()
	url := "http://" + ln.Addr().String()
	if log != nil {
		log.Info(banner, "url", url)
	}
	return url, nil
}

// close stops the server, letting requests in flight finish for up to 5 s.
func (l *listener) close() error {
	l.mu.Lock()
	l.closed = true
	srv := l.srv
	l.mu.Unlock()
	var err error
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = srv.Shutdown(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			// A client that gave up mid-request (a cancelled call) can leave its
			// connection active; a test double need not wait for it.
			err = srv.Close()
		}
	}
	l.wg.Wait()
	return err
}

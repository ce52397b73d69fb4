package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Listener serves one simulator over HTTP on a loopback port, for the real SDK
// clients to reach through their endpoint override, until close.
type Listener struct {
	mu     sync.Mutex
	srv    *http.Server
	closed bool
	wg     sync.WaitGroup
}

// Listen serves h on addr (e.g. "127.0.0.1:0") and returns the base URL; banner
// is logged with it, so make dev's output says which simulator is where.
func (l *Listener) Listen(addr, name string, h http.Handler, log *slog.Logger, banner string) (string, error) {
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

// Close stops the server, letting requests in flight finish for up to 5 s.
func (l *Listener) Close() error {
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

// drainLimit bounds how much of a request body a simulator reads before it
// answers: twice the largest request any simulated API takes (Message Batches,
// 256 MB), so a refusal of any documented size is answered on a connection
// the client can go on using.
const drainLimit = 512 << 20

// BodyFirst wraps w so that the first byte of any answer, a refusal included,
// waits until r's body has been read to its end (or drainLimit): a server that
// answers with part of the body unread must close the connection (net/http does
// past 256 KiB, or once a MaxBytesReader trips), and a client still writing the
// body then loses its request or its next one. Call done when the handler
// returns: it drains a body the handler neither read nor answered.
func BodyFirst(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func()) {
	d := &drainWriter{ResponseWriter: w, body: r.Body}
	return d, d.drain
}

type drainWriter struct {
	http.ResponseWriter
	body    io.Reader
	drained bool
}

func (d *drainWriter) drain() {
	if d.drained || d.body == nil {
		return
	}
	d.drained = true
	// Read errors (a client that went away, a body already closed) leave
	// nothing to keep the connection for; net/http handles that itself.
	if n, _ := io.CopyN(io.Discard, d.body, drainLimit+1); n > drainLimit {
		d.ResponseWriter.Header().Set("Connection", "close")
	}
}

func (d *drainWriter) WriteHeader(code int) {
	d.drain()
	d.ResponseWriter.WriteHeader(code)
}

func (d *drainWriter) Write(p []byte) (int, error) {
	d.drain()
	return d.ResponseWriter.Write(p)
}

func (d *drainWriter) Flush() {
	d.drain()
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (d *drainWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

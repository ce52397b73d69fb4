package console_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// browser drives headless Chromium over the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on fd 3, replies on fd 4, each message
// JSON ended by a NUL byte), so the test needs no WebSocket or CDP library.
type browser struct {
	t       testing.TB
	cmd     *exec.Cmd
	in      io.WriteCloser
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpReply
	session string
	logs    []string // console messages, exceptions and log entries at warning level and above
	stderr  bytes.Buffer
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func startBrowser(t testing.TB, bin string) *browser {
	t.Helper()
	dir := t.TempDir()
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	respR, respW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, in: cmdW, waiting: map[int]chan cdpReply{}}
	b.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--remote-debugging-pipe", "--window-size=1280,900", "about:blank")
	b.cmd.ExtraFiles = []*os.File{cmdR, respW}
	b.cmd.Stderr = &b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmdR.Close()
	respW.Close()
	go b.read(respR)
	t.Cleanup(func() {
		cmdW.Close()
		done := make(chan struct{})
		go func() { b.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			b.cmd.Process.Kill()
			<-done
		}
	})
	var target struct{ TargetID string }
	b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct{ SessionID string }
	b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	b.session = attached.SessionID
	for _, domain := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		b.call(b.session, domain, map[string]any{}, nil)
	}
	b.call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

func (b *browser) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			for id, ch := range b.waiting {
				close(ch)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			return
		}
		msg = msg[:len(msg)-1]
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			cdpReply
		}
		if json.Unmarshal(msg, &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.waiting[m.ID]
			delete(b.waiting, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m.cdpReply
			}
			continue
		}
		if line := logLine(m.Method, m.Params); line != "" {
			b.mu.Lock()
			b.logs = append(b.logs, line)
			b.mu.Unlock()
		}
	}
}

// logLine renders an event that reports a problem on the page ("" otherwise).
func logLine(method string, params json.RawMessage) string {
	switch method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		_ = json.Unmarshal(params, &p)
		if p.Type != "error" && p.Type != "warning" && p.Type != "assert" {
			return ""
		}
		var parts []string
		for _, a := range p.Args {
			parts = append(parts, fmt.Sprint(a.Value, a.Description))
		}
		return "console." + p.Type + ": " + strings.Join(parts, " ")
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		_ = json.Unmarshal(params, &p)
		return "exception: " + p.ExceptionDetails.Text + " " + p.ExceptionDetails.Exception.Description
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Source, Level, Text, URL string
			} `json:"entry"`
		}
		_ = json.Unmarshal(params, &p)
		if p.Entry.Level != "error" && p.Entry.Level != "warning" {
			return ""
		}
		return "log " + p.Entry.Source + " " + p.Entry.Level + ": " + p.Entry.Text + " " + p.Entry.URL
	}
	return ""
}

// call sends one command and decodes its result into out (when not nil).
func (b *browser) call(session, method string, params any, out any) {
	b.t.Helper()
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpReply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(raw, 0)); err != nil {
		b.t.Fatalf("%s: write to chromium: %v\n%s", method, err, b.stderr.String())
	}
	// A guard against a hung browser, not a speed check.
	select {
	case r, ok := <-ch:
		if !ok {
			b.t.Fatalf("%s: chromium closed the pipe\n%s", method, b.stderr.String())
		}
		if r.Error != nil {
			b.t.Fatalf("%s: %s", method, r.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(r.Result, out); err != nil {
				b.t.Fatalf("%s: decode %s: %v", method, r.Result, err)
			}
		}
	case <-time.After(time.Minute):
		b.t.Fatalf("%s: no answer from chromium in a minute", method)
	}
}

// eval runs JavaScript in the page (awaiting a promise) and decodes its value.
func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	b.call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if r.ExceptionDetails != nil {
		b.t.Fatalf("eval %q: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			b.t.Fatalf("eval %q: decode %s: %v", expr, r.Result.Value, err)
		}
	}
}

// waitFor polls a boolean expression until it is true.
func (b *browser) waitFor(what, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a guard against a hung page, not a speed check
	for {
		var ok bool
		b.eval("(() => { try { return Boolean("+expr+"); } catch (_) { return false; } })()", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var state string
			b.eval(`document.body ? document.body.dataset.ready + " | " + document.body.innerText.slice(0, 800) : "no body"`, &state)
			b.t.Fatalf("waiting for %s (%s): page state %q; logs %v", what, expr, state, b.takeLogs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *browser) navigate(url string) {
	b.t.Helper()
	b.call(b.session, "Page.navigate", map[string]any{"url": url}, nil)
}

// takeLogs returns and clears the problems reported so far.
func (b *browser) takeLogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.logs
	b.logs = nil
	return l
}

func (b *browser) screenshot(path string) {
	b.t.Helper()
	var r struct{ Data string }
	b.call(b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

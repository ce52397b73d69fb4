package main

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMakeDevStopsOnSIGTERM runs `make dev ADDR=...` as a user would and
// sends SIGTERM to make's own pid (what a supervisor or an IDE's stop button
// does): the server must stop listening, not linger as an orphan. It also
// checks ADDR is honoured and that the build says what it is doing.
func TestMakeDevStopsOnSIGTERM(t *testing.T) {
	if os.Getenv("MCPBATCH_E2E") == "" {
		t.Skip("MCPBATCH_E2E not set (builds and runs make dev)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command("make", "--no-print-directory", "dev", "ADDR="+addr, "DEV_DIR="+t.TempDir())
	cmd.Dir = "../.."
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group of its own, so cleanup reaches every child
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	up := false
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			up = true
			break
		}
	}
	if !up {
		t.Fatalf("make dev never listened on %s:\n%s", addr, out.String())
	}
	// The server may accept a connection a moment before its banner is written.
	said := func() bool {
		return strings.Contains(out.String(), "make dev: building") && strings.Contains(out.String(), "http://"+addr+"/mcp")
	}
	for deadline := time.Now().Add(10 * time.Second); !said() && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
	}
	if !said() {
		t.Errorf("output does not say it builds, or not the ADDR given:\n%s", out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil { // make's pid only
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("make did not exit within 30 s of SIGTERM")
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("make exited but %s still accepts connections: the server was orphaned\n%s", addr, out.String())
		}
	}
}

// Package motoserver starts moto_server on a free loopback port for tests of the
// AWS adapters, so they talk to a real HTTP API through the real SDK clients.
package motoserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Server is a running moto_server.
type Server struct {
	Endpoint string
	cmd      *exec.Cmd
	done     chan struct{} // closed when the process has exited
}

// Start launches moto_server on 127.0.0.1 at a free port and waits until it answers.
// The port is picked by listening on :0 and closing; another process may bind
// it first, and then this moto_server exits: it is tried again on another port
// (and an answer is only trusted while this process runs, so a test never
// talks to another package's moto).
func Start() (*Server, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, fmt.Errorf("moto_server not on PATH (pip install 'moto[server]'; make test installs it when absent): %w", err)
	}
	for attempt := 1; ; attempt++ {
		s, exited, err := start(bin)
		if err == nil || !exited || attempt == 5 {
			return s, err
		}
	}
}

func start(bin string) (s *Server, exited bool, err error) {
	port, err := freePort()
	if err != nil {
		return nil, false, err
	}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = nil, nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, false, fmt.Errorf("start moto_server: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s = &Server{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, done: done}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		select {
		case <-done:
			return nil, true, fmt.Errorf("moto_server on port %d exited at start (port taken?)", port)
		default:
		}
		resp, err := http.Get(s.Endpoint + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			select {
			case <-done:
				return nil, true, fmt.Errorf("moto_server on port %d exited at start (port taken?)", port)
			default:
				return s, false, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.Stop()
	return nil, false, fmt.Errorf("moto_server on %s did not answer within 60s", s.Endpoint)
}

// Stop ends moto_server and its children.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// Config is an aws.Config with static test credentials for moto; set BaseEndpoint on each client.
func (s *Server) Config() aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", ""),
	}
}

// Reset wipes moto's state between tests.
func (s *Server) Reset(ctx context.Context) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint+"/moto-api/reset", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Main runs a package's tests with a moto_server started before and stopped after.
// Use from TestMain: os.Exit(motoserver.Main(m, &srv)).
func Main(m interface{ Run() int }, out **Server) int {
	s, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "motoserver:", err)
		return 1
	}
	*out = s
	defer s.Stop()
	return m.Run()
}

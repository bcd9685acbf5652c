// Package redistest starts and stops real redis-server processes for
// tests, on loopback ports, each in a temporary directory: a standalone
// server or a Redis Cluster. Without redis-server and redis-cli on the
// PATH the tests skip, saying so, unless TWOCHOICE_REQUIRE_REDIS is set,
// which makes them fail instead (CI sets it, so that the tests cannot
// pass by not running).
//
// Every server a test starts is stopped by t.Cleanup, whether the test
// passes or fails, and on Linux also dies with the test process if that
// is killed (procattr_linux.go).
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireEnv is the variable that makes a missing redis-server fail the
// tests rather than skip them.
const RequireEnv = "TWOCHOICE_REQUIRE_REDIS"

// binaries returns the paths of redis-server and redis-cli, or skips t
// (fails it under RequireEnv) if either is missing.
func binaries(t testing.TB) (server, cli string) {
	t.Helper()
	server, err1 := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	if err := errors.Join(err1, err2); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s is set but the Redis binaries are missing: %v", RequireEnv, err)
		}
		t.Skipf("no Redis server to test against (%v); install redis-server, or set %s=1 to fail here", err, RequireEnv)
	}
	return server, cli
}

// Server is a redis-server process started by a test.
type Server struct {
	Addr string // host:port
	Port int
	Dir  string // its working directory: logs, persistence files

	t        testing.TB
	bin, cli string
	args     []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts a standalone redis-server on a free loopback port, with no
// persistence unless args (more configuration, as on redis-server's
// command line) ask for it, and stops it when the test ends.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	return start(t, args)
}

func start(t testing.TB, extra []string) *Server {
	t.Helper()
	bin, cli := binaries(t)
	var lastErr error
	for range 5 { // a free port can be taken before the server binds it
		ports := freePorts(t, 2)
		s := &Server{
			Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
			Port: ports[0],
			Dir:  tempDir(t),
			t:    t,
			bin:  bin,
			cli:  cli,
		}
		s.args = append([]string{
			"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
			"--dir", s.Dir, "--logfile", "redis.log",
			"--save", "", "--appendonly", "no",
			"--daemonize", "no", "--protected-mode", "no",
		}, expand(extra, ports[1])...)
		if lastErr = s.launch(); lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("starting redis-server: %v", lastErr)
	return nil
}

// expand replaces "{busport}" in args by port.
func expand(args []string, port int) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "{busport}", strconv.Itoa(port))
	}
	return out
}

// launch starts the process and waits until it answers PING.
func (s *Server) launch() error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.Dir
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if out, err := s.Cmd("PING"); err == nil && out == "PONG" {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("redis-server on port %d exited: %s", s.Port, s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("redis-server on port %d did not answer in 10 s: %s", s.Port, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logTail returns the end of the server's log.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}

// Kill kills the server at once (SIGKILL), as a crash would, and waits for
// it to exit. The Server can be restarted.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Restart starts the server again, on the same port and directory with
// the same configuration, after Kill.
func (s *Server) Restart() {
	s.t.Helper()
	var err error
	for range 50 { // the port may linger a moment after the kill
		if err = s.launch(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("restarting redis-server: %v", err)
}

// Stop stops the server if it runs; tests' cleanups call it.
func (s *Server) Stop() { s.Kill() }

// MustCmd is Cmd that fails the test on an error.
func (s *Server) MustCmd(args ...string) string {
	s.t.Helper()
	out, err := s.Cmd(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// Info returns the fields of INFO section.
func (s *Server) Info(section string) map[string]string {
	s.t.Helper()
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s.MustCmd("INFO", section)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok {
			m[k] = v
		}
	}
	return m
}

// tempDir returns a directory for a server's files, removed when the test
// ends: on tmpfs where there is one (/dev/shm), so that a server run with
// appendfsync always does not wait for a disk.
func tempDir(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "redistest-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

package redisstore_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/skillkit/skillkit/session/redisstore"
)

// fast are the server settings of tests that do not restart the server:
// no snapshots, no append-only file.
var fast = []string{"--save", "", "--appendonly", "no"}

// server is a redis-server the test started on 127.0.0.1, in its own
// directory, stopped on cleanup.
type server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	args []string
	cmd  *exec.Cmd
	done chan struct{}
	// Addr is host:port of the server.
	Addr string
}

// needRedis returns the redis-server binary, skipping the test when it is
// not installed.
func needRedis(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found: apt-get install redis-server (.ci/run installs it)")
	}
	return bin
}

// startServer starts redis-server with args on a free port.
func startServer(t testing.TB, args ...string) *server {
	t.Helper()
	srv := &server{t: t, bin: needRedis(t), dir: t.TempDir(), args: args}
	var err error
	for try := 0; try < 3; try++ {
		srv.port = freePort(t)
		if err = srv.start(); err == nil {
			t.Cleanup(srv.stop)
			return srv
		}
	}
	t.Fatalf("start redis-server: %v", err)
	return nil
}

// freePort returns a port nothing listens on at the moment.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start runs the server on srv.port and waits until it answers PING
// (after loading its data).
func (srv *server) start() error {
	srv.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.port))
	logFile := filepath.Join(srv.dir, "redis.log")
	args := append([]string{"--port", strconv.Itoa(srv.port), "--bind", "127.0.0.1", "--dir", srv.dir,
		"--daemonize", "no", "--protected-mode", "no", "--logfile", logFile}, srv.args...)
	cmd := exec.Command(srv.bin, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	srv.cmd, srv.done = cmd, done
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			log, _ := os.ReadFile(logFile)
			return fmt.Errorf("redis-server on port %d exited (%v); its log:\n%s", srv.port, cmd.ProcessState, log)
		default:
		}
		if ping(srv.Addr) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.kill()
	return fmt.Errorf("redis-server on port %d did not answer PING within 15s", srv.port)
}

// ping reports whether the server at addr answers PING with PONG (not
// LOADING).
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// kill ends the server with SIGKILL, as a crash would.
func (srv *server) kill() {
	if srv.cmd == nil {
		return
	}
	_ = srv.cmd.Process.Signal(syscall.SIGKILL)
	<-srv.done
	srv.cmd = nil
}

// stop ends the server with SIGTERM, then SIGKILL after 5s.
func (srv *server) stop() {
	if srv.cmd == nil {
		return
	}
	_ = srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-srv.done:
		srv.cmd = nil
	case <-time.After(5 * time.Second):
		srv.kill()
	}
}

// restart starts the server again on the same port and directory.
func (srv *server) restart() {
	srv.t.Helper()
	if err := srv.start(); err != nil {
		srv.t.Fatalf("restart redis-server: %v", err)
	}
}

var prefixes atomic.Int64

// openStore opens a store on srv under a prefix of its own, so tests
// sharing a server do not see each other's sessions. opts may be nil.
func openStore(t testing.TB, srv *server, opts *redisstore.Options) *redisstore.Store {
	t.Helper()
	var o redisstore.Options
	if opts != nil {
		o = *opts
	}
	if o.Client == nil {
		o.Addr = srv.Addr
	}
	if o.Prefix == "" {
		o.Prefix = fmt.Sprintf("test%d:", prefixes.Add(1))
	}
	st, err := redisstore.Open(context.Background(), &o)
	if err != nil {
		t.Fatalf("Open(%s): %v", srv.Addr, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

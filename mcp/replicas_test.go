package mcp_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/internal/podmantest"
	"github.com/skillkit/skillkit/mcp"
)

// startRedis runs redis-server on a free loopback port for the test.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found: apt-get install redis-server (.ci/run installs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not listen on %s: %s", addr, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startReplica runs one `skillkit serve --http` with args and returns its
// endpoint and the process.
func startReplica(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	return startReplicaEnv(t, nil, args...)
}

// startReplicaEnv is startReplica with env added to the environment.
func startReplicaEnv(t *testing.T, env []string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(skillkitBinary(t), append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr := &lineWatcher{re: endpointLine, found: make(chan string, 1)}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	select {
	case ep := <-stderr.found:
		return ep, cmd
	case <-time.After(90 * time.Second):
		t.Fatalf("no endpoint line:\n%s", stderr)
	}
	return "", nil
}

// TestReplicasShareSessions runs two serve replicas on one Redis and one
// workspaces folder: a stateless conversation started on the first goes
// on on the second after the first is killed, with its load state and its
// workspace.
func TestReplicasShareSessions(t *testing.T) {
	redis := startRedis(t)
	root, ws := writeSkills(t), t.TempDir()
	args := []string{"--store", "redis://" + redis, "--workspaces", ws, "--local-exec", root}
	epA, a := startReplica(t, args...)
	epB, _ := startReplica(t, args...)

	ca := connectHTTP(t, epA, "2026-07-28", nil)
	_, res := call(t, ca, "skill", map[string]any{"name": "greet"}, nil)
	id, _ := res.Meta[mcp.SessionMetaKey].(string)
	if id == "" {
		t.Fatalf("no session in %+v", res.Meta)
	}
	meta := sdk.Meta{mcp.SessionMetaKey: id}
	if text, res := call(t, ca, "workspace_exec", map[string]any{"command": "echo kept > note.txt"}, meta); res.IsError {
		t.Fatalf("exec on A: %s", text)
	}
	// A dies mid-conversation.
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()

	cb := connectHTTP(t, epB, "2026-07-28", nil)
	// skill_read needs the skill loaded in this session: the load state
	// came along.
	text, res := call(t, cb, "skill_read", map[string]any{"skill": "greet", "path": "references/style.md"}, meta)
	if res.IsError || !strings.Contains(text, "Be brief.") {
		t.Errorf("skill_read on B: %q", text)
	}
	if text, res := call(t, cb, "skill_read", map[string]any{"skill": "greet", "path": "references/style.md"}, nil); !res.IsError {
		t.Errorf("skill_read in a new session, without the load, succeeded: %q", text)
	}
	text, res = call(t, cb, "workspace_exec", map[string]any{"command": "cat note.txt"}, meta)
	if res.IsError || !strings.Contains(text, "kept") {
		t.Errorf("the workspace on B: %q", text)
	}
	// A session no replica issued is still refused.
	if _, err := cb.CallTool(t.Context(), &sdk.CallToolParams{Name: "skill", Arguments: map[string]any{"name": "greet"},
		Meta: sdk.Meta{mcp.SessionMetaKey: "never-issued"}}); err == nil {
		t.Error("a session no replica issued was accepted")
	}
}

// TestReplicasShareSessionsContainer is TestReplicasShareSessions with
// the container runner on one Podman: the workspace goes on on the second
// replica in a container of its own, and the container the first left
// behind is removed.
func TestReplicasShareSessionsContainer(t *testing.T) {
	env := podmantest.Start(t)
	redis := startRedis(t)
	root, ws := writeSkills(t), t.TempDir()
	args := []string{"--store", "redis://" + redis, "--workspaces", ws, "--runner", "container", "--image", env.Image, root}
	dockerHost := "DOCKER_HOST=unix://" + env.Socket
	epA, a := startReplicaEnv(t, []string{dockerHost}, args...)
	epB, _ := startReplicaEnv(t, []string{dockerHost}, args...)

	ca := connectHTTP(t, epA, "2026-07-28", nil)
	_, res := call(t, ca, "skill", map[string]any{"name": "greet"}, nil)
	id, _ := res.Meta[mcp.SessionMetaKey].(string)
	if id == "" {
		t.Fatalf("no session in %+v", res.Meta)
	}
	meta := sdk.Meta{mcp.SessionMetaKey: id}
	if text, res := call(t, ca, "workspace_exec", map[string]any{"command": "echo kept > note.txt; id -u"}, meta); res.IsError || !strings.Contains(text, "65534") {
		t.Fatalf("exec on A: %s", text)
	}
	before := containers(t, env)
	if len(before) != 1 {
		t.Fatalf("containers after A's call: %q", before)
	}
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()

	cb := connectHTTP(t, epB, "2026-07-28", nil)
	text, res := call(t, cb, "workspace_exec", map[string]any{"command": "cat note.txt; echo more >> note.txt; cat /proc/1/cmdline | tr '\\0' ' '"}, meta)
	if res.IsError || !strings.Contains(text, "kept") {
		t.Errorf("the workspace on B: %q", text)
	}
	text, res = call(t, cb, "skill_read", map[string]any{"skill": "greet", "path": "references/style.md"}, meta)
	if res.IsError || !strings.Contains(text, "Be brief.") {
		t.Errorf("skill_read on B: %q", text)
	}
	// B made a container of its own, and removed A's (its owner is dead).
	deadline := time.Now().Add(60 * time.Second)
	for {
		after := containers(t, env)
		if len(after) == 1 && after[0] != before[0] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("containers: before %q, after %q: want only B's", before, after)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// containers lists the names of the engine's containers.
func containers(t *testing.T, env *podmantest.Env) []string {
	t.Helper()
	out, err := env.CLI("ps", "-a", "--format", "{{.Names}}")
	if err != nil {
		t.Fatalf("podman ps: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

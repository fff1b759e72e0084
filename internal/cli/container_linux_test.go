//go:build linux

package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/internal/podmantest"
	"github.com/skillkit/skillkit/tools"
)

// TestExecInContainer runs a skill's command with --runner container
// against a real Podman engine: the skill is staged and the command runs
// as nobody in the image (the runner's own suite covers the confinement).
func TestExecInContainer(t *testing.T) {
	env := podmantest.Start(t)
	vars := map[string]string{"DOCKER_HOST": "unix://" + env.Socket}
	out, errOut, code := runCLIVars(t, vars, "exec", "--runner", "container", "--image", env.Image, "--json",
		"--skill", "release-notes", examples, "--", "sh", "-c", "id -u; ls")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{`65534`, "SKILL.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A command that kills what runs it in the container is a result:
	// what it printed, killed, and a note that says why.
	out, errOut, code = runCLIVars(t, vars, "exec", "--runner", "container", "--image", env.Image, "--json",
		"--", "sh", "-c", "echo before; kill -9 $PPID; sleep 1; echo after")
	var res tools.ExecResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d, not JSON: %v\n%s\n%s", code, err, out, errOut)
	}
	// (What it printed reaches the result only if the agent forwarded it
	// before it died: "before", or nothing; never "after".)
	if res.ExitCode != 137 || res.Stdout != "before\n" && res.Stdout != "" || !strings.Contains(strings.Join(res.Notes, "\n"), "agent ended") {
		t.Errorf("exit %d: %+v", code, res)
	}
}

// runCLIVars runs the CLI with vars as its environment.
func runCLIVars(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCLI(t, t.Context(), nil, vars, args...)
}

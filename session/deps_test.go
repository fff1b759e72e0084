package session_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The storage layer knows nothing of skills: no package under session/
// imports another skillkit package, directly or through a dependency.
func TestStorageImportsNoSkillkitPackage(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("needs the go command to list dependencies: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v", err)
	}
	const module = "github.com/skillkit/skillkit/"
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, module) && !strings.HasPrefix(pkg, module+"session") {
			t.Errorf("a package under session/ depends on %s; storage must not import the layers above it", pkg)
		}
	}
}

package cli

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/mcp"
)

// skillsServer serves examples over MCP on 127.0.0.1, with a token.
func skillsServer(t *testing.T, token string) string {
	t.Helper()
	kit, err := skillkit.New(t.Context(), &skillkit.Options{Roots: []string{examples}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.New(t.Context(), kit, &mcp.Options{Refresh: -1})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler(&mcp.HTTPOptions{Token: token}))
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close()
		_ = kit.Close()
	})
	return hs.URL + "/mcp"
}

// TestFromMCP takes the skills of another MCP server: listed, shown and
// served again, with the token from the environment.
func TestFromMCP(t *testing.T) {
	url := skillsServer(t, "tok3n")
	empty := t.TempDir()
	runEnv := func(vars map[string]string, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }, Cwd: t.TempDir()})
		return out.String(), errb.String(), code
	}
	tok := map[string]string{fromMCPTokenEnv: "tok3n"}
	out, errOut, code := runEnv(tok, "list", "--from-mcp", url, empty)
	if code != 0 || !strings.Contains(out, "csv-stats") || !strings.Contains(out, "api-style-guide") {
		t.Fatalf("list --from-mcp: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runEnv(tok, "show", "csv-stats", "--from-mcp", url, empty)
	if code != 0 || !strings.Contains(out, "CSV statistics") {
		t.Fatalf("show --from-mcp: exit %d\n%s\n%s", code, out, errOut)
	}
	// Without the token the server refuses, and the error names the
	// flag, not the token.
	_, errOut, code = runEnv(nil, "list", "--from-mcp", url, empty)
	if code == 0 || !strings.Contains(errOut, "--from-mcp") {
		t.Errorf("without the token: exit %d: %s", code, errOut)
	}
	// Credentials in the URL never reach messages.
	bad := strings.Replace(url, "http://", "http://user:s3cret@", 1)
	_, errOut, _ = runEnv(nil, "list", "--from-mcp", bad, empty)
	if strings.Contains(errOut, "s3cret") {
		t.Errorf("the URL's password is in the error: %s", errOut)
	}
}

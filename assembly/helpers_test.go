package assembly_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// skillFiles is the skill tree the tests use:
//
//	alpha  three documents
//	beta   one document
//	gamma  no documents
//	delta  one document
var skillFiles = map[string]string{
	"alpha/SKILL.md":            "---\nname: alpha\ndescription: Alpha does the first thing.\n---\n# Alpha\n\nFollow the alpha steps.\n",
	"alpha/references/a.md":     "# A\n\nFirst reference.\n",
	"alpha/references/b.md":     "# B\n\nSecond reference.\n",
	"alpha/notes.txt":           "alpha notes\n",
	"beta/SKILL.md":             "---\nname: beta\ndescription: Beta does the second thing.\n---\n# Beta\n\nFollow the beta steps.\n",
	"beta/guide.md":             "# Beta guide\n",
	"gamma/SKILL.md":            "---\nname: gamma\ndescription: Gamma has no documents.\n---\n# Gamma\n",
	"delta/SKILL.md":            "---\nname: delta\ndescription: Delta is the fourth skill.\n---\n# Delta\n",
	"delta/references/extra.md": "# Delta extra\n",
}

// writeTree writes files under a new temporary directory and returns it.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, data := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// newSnapshot builds a registry over a real directory. The source is an
// os.DirFS, so no host path reaches rendered text and golden files stay
// machine independent.
func newSnapshot(t testing.TB, files map[string]string) *registry.Snapshot {
	t.Helper()
	root := writeTree(t, files)
	reg, err := registry.New(context.Background(), []source.Source{source.FS(os.DirFS(root), "project", 0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg.Snapshot()
}

// testConv is a conversation with what the tests need to open more of
// them on its session.
type testConv struct {
	*conversation.Conversation
	store session.Store
	opts  conversation.Options
}

// newConv creates a session in store and opens agent's conversation over
// it with opts, its skills being snap.
func newConv(t testing.TB, store session.Store, opts conversation.Options, agent string, snap *registry.Snapshot) *testConv {
	t.Helper()
	ctx := context.Background()
	s, err := store.Create(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Skills = func(context.Context) *registry.Snapshot { return snap }
	c, err := conversation.Open(ctx, store, s.ID, agent, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return &testConv{c, store, opts}
}

// reopen opens another agent's conversation on the same session.
func reopen(t testing.TB, c *testConv, agent string) *testConv {
	t.Helper()
	o, err := conversation.Open(context.Background(), c.store, c.ID(), agent, &c.opts)
	if err != nil {
		t.Fatal(err)
	}
	return &testConv{o, c.store, c.opts}
}

// tools returns the tools c's next request offers.
func toolsOf(t testing.TB, c *testConv) []tools.Tool {
	t.Helper()
	ts, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func user(t testing.TB, c *testConv, text string) {
	t.Helper()
	if _, err := c.User(context.Background(), text); err != nil {
		t.Fatal(err)
	}
}

// call records a tool call that must succeed.
func call(t testing.TB, c *testConv, tool, args string) {
	t.Helper()
	res, err := c.Call(context.Background(), tool, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s %s: %s", tool, args, res.Text)
	}
}

func request(t testing.TB, c *testConv) *assembly.Request {
	t.Helper()
	r, err := c.Request(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func getSession(t testing.TB, c *testConv) *session.Session {
	t.Helper()
	s, err := c.store.Get(context.Background(), c.ID())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./assembly -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// messagesJSON encodes a request's messages, indented, for golden files.
func messagesJSON(t testing.TB, r *assembly.Request) []byte {
	t.Helper()
	b, err := json.MarshalIndent(r.Messages, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// testReadCap is the registry's MaxReadBytes in these tests, small enough
// to build files exactly at and one past the cap.
const testReadCap = 100

// pngBytes is the start of a real PNG file (signature and IHDR chunk).
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

// fixture is a registry over a real skill tree in t.TempDir().
type fixture struct {
	root string // the source directory (host path)
	snap *registry.Snapshot
}

// skillDir returns the host folder of a skill of the fixture.
func (f fixture) skillDir(name string) string { return filepath.Join(f.root, name) }

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillMD(name, extra, body string) []byte {
	return []byte("---\nname: " + name + "\ndescription: The " + name + " skill.\n" + extra + "---\n" + body)
}

// newFixture writes these skills and builds a registry over them:
//
//	alpha   documents, a script, a PNG, files at and past the read cap
//	nodocs  SKILL.md only
//	hidden  disable-model-invocation: true
//	broken  SKILL.md rewritten after discovery so that it no longer parses
//	gone    SKILL.md deleted after discovery
func newFixture(t testing.TB) fixture {
	t.Helper()
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.md")
	writeFile(t, outside, []byte("secret"))
	files := map[string][]byte{
		"alpha/SKILL.md":              skillMD("alpha", "", "\n# Alpha\n\nRun scripts/run.sh.\n"),
		"alpha/references/api.md":     []byte("# API\n"),
		"alpha/references/guide.md":   []byte("# Guide\n"),
		"alpha/notes.txt":             []byte("notes\n"),
		"alpha/scripts/run.sh":        []byte("#!/bin/sh\necho hi\n"),
		"alpha/assets/logo.png":       pngBytes,
		"alpha/data/exact.bin":        bytes.Repeat([]byte("a"), testReadCap),
		"alpha/data/over.bin":         bytes.Repeat([]byte("a"), testReadCap+1),
		"alpha/data/empty.txt":        {},
		"alpha/data/nul.txt":          []byte("text\x00with a NUL"),
		"nodocs/SKILL.md":             skillMD("nodocs", "", "No documents here.\n"),
		"hidden/SKILL.md":             skillMD("hidden", "disable-model-invocation: true\n", "Hidden.\n"),
		"hidden/references/secret.md": []byte("# Secret\n"),
		"broken/SKILL.md":             skillMD("broken", "", "Broken later.\n"),
		"gone/SKILL.md":               skillMD("gone", "", "Gone later.\n"),
	}
	for rel, data := range files {
		writeFile(t, filepath.Join(root, filepath.FromSlash(rel)), data)
	}
	// A link that leaves the skill: never part of its manifest.
	if err := os.Symlink(outside, filepath.Join(root, "alpha", "references", "escape.md")); err != nil {
		t.Fatal(err)
	}
	src, err := source.Dir(root, "project", 0)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(context.Background(), []source.Source{src}, &registry.Options{MaxReadBytes: testReadCap})
	if err != nil {
		t.Fatal(err)
	}
	// Change the tree behind the snapshot's back: these are the provider
	// errors a skill tool must report as "Error: <message>".
	writeFile(t, filepath.Join(root, "broken", "SKILL.md"), []byte("no front matter any more\n"))
	if err := os.Remove(filepath.Join(root, "gone", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	f := fixture{root: src.Path, snap: reg.Snapshot()}
	for _, name := range []string{"alpha", "nodocs", "hidden", "broken", "gone"} {
		if _, ok := f.snap.Lookup(name); !ok {
			t.Fatalf("fixture: skill %q not discovered; diagnostics: %v", name, f.snap.Diagnostics())
		}
	}
	return f
}

// mapFSSnapshot returns a snapshot over an in-memory source (no host
// path) holding the skill pdf.
func mapFSSnapshot(t testing.TB) *registry.Snapshot {
	t.Helper()
	fsys := fstest.MapFS{
		"pdf/SKILL.md":          {Data: skillMD("pdf", "", "Use <pdftotext> & friends.\n")},
		"pdf/references/api.md": {Data: []byte("# API\n")},
	}
	reg, err := registry.New(context.Background(), []source.Source{source.FS(fsys, "bundled & co", 0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg.Snapshot()
}

// without returns a view of the fixture's snapshot that hides name.
func (f fixture) without(name string) *registry.Snapshot {
	return f.snap.View(context.Background(), func(_ context.Context, s skill.Summary) bool { return s.Name != name })
}

// state is a minimal load state: loaded skills and their selections.
type state map[string][]string

func (s state) Loaded(name string) bool { _, ok := s[name]; return ok }

func (s state) Docs(name string) ([]string, bool) {
	d := s[name]
	if len(d) == 1 && d[0] == "*" {
		return nil, true
	}
	return d, false
}

// args marshals v as tool arguments.
func args(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		writeFile(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tools -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test ./tools -update after checking):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// run calls tool and fails the test on a handler error: the tests here
// check results the model sees.
func run(tb testing.TB, tool Tool, c Call) Result {
	tb.Helper()
	r, err := tool.Call(context.Background(), c)
	if err != nil {
		tb.Fatalf("%s: handler error: %v", tool.Name, err)
	}
	return r
}

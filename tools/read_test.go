package tools

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/source"
)

func TestRead(t *testing.T) {
	f := newFixture(t)
	loaded := state{"alpha": nil, "hidden": nil, "nodocs": nil}
	notFile := func(p string) string {
		return fmt.Sprintf(`Error: %q is not a file of skill "alpha"; paths are relative to the skill folder (see skill_list_docs for documents)`, p)
	}
	read := func(p string) string { return `{"skill":"alpha","path":` + fmt.Sprintf("%q", p) + `}` }
	absNotes := filepath.Join(f.skillDir("alpha"), "notes.txt")
	tests := []callCase{
		{name: "text file", state: loaded, args: read("notes.txt"), want: "notes\n"},
		{name: "script", state: loaded, args: read("scripts/run.sh"), want: "#!/bin/sh\necho hi\n"},
		{name: "dot slash prefix", state: loaded, args: read("./notes.txt"), want: "notes\n"},
		{name: "dot dot inside the skill", state: loaded, args: read("references/../notes.txt"), want: "notes\n"},
		{name: "SKILL.md itself", state: loaded, args: `{"skill":"nodocs","path":"SKILL.md"}`,
			want: "---\nname: nodocs\ndescription: The nodocs skill.\n---\nNo documents here.\n"},
		{name: "empty file", state: loaded, args: read("data/empty.txt"), want: ""},
		{name: "exactly at the read cap", state: loaded, args: read("data/exact.bin"), want: strings.Repeat("a", testReadCap)},
		{name: "one past the read cap", state: loaded, args: read("data/over.bin"),
			want:    `Error: file "data/over.bin" of skill "alpha" is 101 bytes, over the 100-byte read limit: file too large; it cannot be read whole, process it with a command instead (workspace_exec, when available)`,
			wantErr: true},
		{name: "binary PNG described", state: loaded, args: read("assets/logo.png"),
			want: fmt.Sprintf("assets/logo.png is a binary file (image/png, %d bytes); its content is not shown. Use it from a command (workspace_exec, when available).", len(pngBytes))},
		{name: "valid UTF-8 with a NUL byte is binary", state: loaded, args: read("data/nul.txt"),
			want: "data/nul.txt is a binary file (application/octet-stream, 15 bytes); its content is not shown. Use it from a command (workspace_exec, when available)."},
		{name: "parent directory", state: loaded, args: read("../nodocs/SKILL.md"), want: notFile("../nodocs/SKILL.md"), wantErr: true},
		{name: "parent of the root", state: loaded, args: read("../../etc/passwd"), want: notFile("../../etc/passwd"), wantErr: true},
		{name: "absolute path", state: loaded, args: read("/etc/passwd"), want: notFile("/etc/passwd"), wantErr: true},
		{name: "absolute host path of a skill file", state: loaded, args: read(absNotes), want: notFile(absNotes), wantErr: true},
		{name: "link out of the skill", state: loaded, args: read("references/escape.md"), want: notFile("references/escape.md"), wantErr: true},
		{name: "missing file", state: loaded, args: read("references/none.md"), want: notFile("references/none.md"), wantErr: true},
		{name: "directory", state: loaded, args: read("references"), want: notFile("references"), wantErr: true},
		{name: "backslash path", state: loaded, args: read(`references\api.md`), want: notFile(`references\api.md`), wantErr: true},
		{name: "empty path", state: loaded, args: `{"skill":"alpha"}`,
			want: `Error: skill_read needs a path, relative to the folder of skill "alpha" (for example references/api.md)`, wantErr: true},
		{name: "not loaded, nil state", args: read("notes.txt"),
			want: `Error: skill "alpha" is not loaded; call skill or skill_load first`, wantErr: true},
		{name: "not loaded, other skill loaded", state: state{"nodocs": nil}, args: read("notes.txt"),
			want: `Error: skill "alpha" is not loaded; call skill or skill_load first`, wantErr: true},
		{name: "hidden from the model, not loaded", state: state{"alpha": nil}, args: `{"skill":"hidden","path":"references/secret.md"}`,
			want: `Error: skill "hidden" is not available for model invocation`, wantErr: true},
		{name: "hidden from the model, loaded by the user's /hidden", state: state{"hidden": nil}, args: `{"skill":"hidden","path":"references/secret.md"}`,
			want: "# Secret\n"},
		{name: "loaded but filtered out", state: loaded, snap: f.without("alpha"), args: read("notes.txt"),
			want: `Error: skill "alpha" is unknown or no longer available`, wantErr: true},
		{name: "path not a string", state: loaded, args: `{"skill":"alpha","path":1}`,
			want: "Error: invalid arguments to skill_read: \"path\" is a number, not a string; send one JSON object that matches the tool's schema", wantErr: true},
	}
	runCases(t, f, Read(), append(tests, skillArgCases(f, ReadName, `,"path":"notes.txt"`)...))
}

// TestReadDefaultCap reads at and one past the registry's default cap
// (no Options), through an in-memory source.
func TestReadDefaultCap(t *testing.T) {
	fsys := fstest.MapFS{
		"big/SKILL.md": {Data: skillMD("big", "", "Big files.\n")},
		"big/at.txt":   {Data: bytes.Repeat([]byte("b"), registry.DefaultMaxReadBytes)},
		"big/past.txt": {Data: bytes.Repeat([]byte("b"), registry.DefaultMaxReadBytes+1)},
	}
	reg, err := registry.New(t.Context(), []source.Source{source.FS(fsys, "bundled", 0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(p string) Result {
		return run(t, Read(), Call{Args: []byte(`{"skill":"big","path":"` + p + `"}`), Skills: reg.Snapshot(), State: state{"big": nil}})
	}
	if got := call("at.txt"); got.IsError || len(got.Text) != registry.DefaultMaxReadBytes {
		t.Errorf("at the default cap: IsError=%v, %d bytes, want the whole %d-byte file", got.IsError, len(got.Text), registry.DefaultMaxReadBytes)
	}
	want := fmt.Sprintf(`Error: file "past.txt" of skill "big" is %d bytes, over the %d-byte read limit: file too large; it cannot be read whole, process it with a command instead (workspace_exec, when available)`, registry.DefaultMaxReadBytes+1, registry.DefaultMaxReadBytes)
	if got := call("past.txt"); !got.IsError || got.Text != want {
		t.Errorf("past the default cap: got %q (IsError=%v), want %q", got.Text, got.IsError, want)
	}
}

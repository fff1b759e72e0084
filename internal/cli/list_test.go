package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestListShadowedCounts checks that list --all counts a shadowed skill's
// files exactly as the registry counts a winner's: both are read through
// the no-follow file system of source.Dir, links inside the skill
// resolved once (kept inside the folder, dropped when they lead out) and
// special files left out. The shadowed copy sits behind a folder link,
// which discovery follows, and holds a FIFO, which must not block list.
func TestListShadowedCounts(t *testing.T) {
	high, low, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(elsewhere, "secret.md"), "not part of any skill\n")
	fill := func(dir string) {
		t.Helper()
		writeSkill(t, filepath.Dir(dir), filepath.Base(dir), "---\nname: dup\ndescription: Twice.\n---\nBody\n")
		mustMkdir(t, filepath.Join(dir, "references"))
		mustWrite(t, filepath.Join(dir, "references", "guide.md"), "guide\n")
		mustWrite(t, filepath.Join(dir, "data.bin"), "0123456789")
		mustSymlink(t, "references/guide.md", filepath.Join(dir, "alias.md"))
		mustSymlink(t, filepath.Join(elsewhere, "secret.md"), filepath.Join(dir, "leak.md"))
		if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	fill(filepath.Join(high, "dup"))
	fill(filepath.Join(elsewhere, "dup"))
	mustSymlink(t, filepath.Join(elsewhere, "dup"), filepath.Join(low, "dup"))

	out, errOut, code := run(t, "list", "--json", "--all", high, low)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var items []listItem
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	if len(items) != 2 || items[1].ShadowedBy == "" {
		t.Fatalf("want a winner and a shadowed skill, got %+v", items)
	}
	win, lost := items[0], items[1]
	if lost.Error != "" {
		t.Fatalf("shadowed skill: %s", lost.Error)
	}
	// SKILL.md, references/guide.md, data.bin and alias.md (the guide
	// again); leak.md leads out and pipe is no regular file.
	body, _ := os.ReadFile(filepath.Join(high, "dup", "SKILL.md"))
	want := listItem{Files: 4, Bytes: int64(len(body)) + 6 + 10 + 6, Docs: 2}
	for _, it := range []listItem{win, lost} {
		if it.Files != want.Files || it.Bytes != want.Bytes || it.Docs != want.Docs {
			t.Errorf("%s: files %d, bytes %d, docs %d; want %d, %d, %d", it.Path, it.Files, it.Bytes, it.Docs, want.Files, want.Bytes, want.Docs)
		}
	}
	if lost.Path != filepath.Join(low, "dup") {
		t.Errorf("shadowed path %q, want the link %q", lost.Path, filepath.Join(low, "dup"))
	}
}

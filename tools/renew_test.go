package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/source"
)

// A skill's files replaced on disk after the snapshot was taken: with
// Call.Renew the call runs again on a renewed snapshot and sees them as
// they are now; without it the call reports the change.
func TestStaleReadRenewed(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillMD("s", "", "Old instructions.\n"))
	writeFile(t, filepath.Join(root, "s", "references", "guide.md"), []byte("old guide\n"))
	src, err := source.Dir(root, "project", 0)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(t.Context(), []source.Source{src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := reg.Snapshot()
	// The snapshot pins what it reads: read the guide before it changes
	// (SKILL.md is checked against what discovery saw of it).
	if r := run(t, Read(), Call{Args: []byte(`{"skill":"s","path":"references/guide.md"}`), Skills: snap, State: state{"s": nil}}); r.IsError {
		t.Fatal(r.Text)
	}
	// Both replaced by rename, as editors save: another file at the path.
	replace := func(rel string, data []byte) {
		p := filepath.Join(root, "s", filepath.FromSlash(rel))
		writeFile(t, p+".new", data)
		if err := os.Rename(p+".new", p); err != nil {
			t.Fatal(err)
		}
	}
	replace("SKILL.md", skillMD("s", "", "New instructions.\n"))
	replace("references/guide.md", []byte("new guide\n"))
	renews := 0
	renew := func(ctx context.Context, stale *registry.Snapshot) (*registry.Snapshot, error) {
		renews++
		return reg.Renew(ctx, stale)
	}
	for _, tc := range []struct {
		name string
		tool Tool
		args string
		want string
	}{
		{"skill", Skill(), `{"name":"s"}`, "New instructions."},
		{"skill_read", Read(), `{"skill":"s","path":"references/guide.md"}`, "new guide\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Call{Args: []byte(tc.args), Skills: snap, State: state{"s": nil}}
			old := run(t, tc.tool, c)
			if !old.IsError || !strings.Contains(old.Text, "changed") {
				t.Errorf("without Renew: %+v, want the change reported", old)
			}
			c.Renew = renew
			got := run(t, tc.tool, c)
			if got.IsError || !strings.Contains(got.Text, tc.want) {
				t.Errorf("with Renew: %+v, want %q", got, tc.want)
			}
		})
	}
	if renews == 0 {
		t.Error("Renew was never called")
	}
	if cur := reg.Snapshot(); cur == snap {
		t.Error("the registry still holds the stale snapshot")
	}
	// A later stale reader of the same old snapshot gets one that reads
	// the skill as it is now.
	again, err := reg.Renew(t.Context(), snap)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := again.Body(t.Context(), "s"); err != nil || !strings.Contains(body, "New instructions.") {
		t.Errorf("renewed again: %q %v", body, err)
	}
}

//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPrivateDir checks the test the shared fallback store directory
// must pass: a real directory of this user's that nobody else can use.
func TestCheckPrivateDir(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	private := mk("private", 0o700)
	open := mk("open", 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ dir, want string }{
		{private, ""},
		{open, "has mode -rwxr-xr-x; others may read or change it"},
		{link, "is not a directory"},
		{file, "is not a directory"},
	}
	if os.Geteuid() == 0 {
		theirs := mk("theirs", 0o700)
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		tests = append(tests, struct{ dir, want string }{theirs, "belongs to uid 65534, not to you"})
	}
	for _, tt := range tests {
		err := checkPrivateDir(tt.dir)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("checkPrivateDir(%s) = %v, want %q", filepath.Base(tt.dir), err, tt.want)
		}
	}
}

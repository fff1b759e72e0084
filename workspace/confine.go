package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Names inside the roots and inside each workspace.
const (
	// trashPrefix starts the names Sweep renames workspaces and records to
	// before removing them, in Root and in MetaRoot.
	trashPrefix = ".trash-"
	// stagePrefix and oldPrefix start the temporary directories of Stage,
	// inside skills/ so that the final rename stays on one file system.
	// Skill names cannot start with '.', so they never collide.
	stagePrefix = ".stage-"
	oldPrefix   = ".old-"

	skillsName = "skills"
	workName   = "work"
	outName    = "out"
	runsName   = "runs"
	inputsRel  = "work/inputs"
)

// Length limits for names used as path elements.
const (
	maxIDLen    = 128
	maxSkillLen = 64
)

// validName checks that s can be used as exactly one path element: ASCII
// letters, digits, '.', '_' and '-', not starting with '.' (which rules out
// "." and ".." and hidden names), at most maxLen bytes. what names the
// argument in the error.
func validName(what, s string, maxLen int) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %s %q %s; use letters, digits, '.', '_' or '-' (not first: '.')", ErrInvalidName, what, s, why)
	}
	switch {
	case s == "":
		return bad("is empty")
	case len(s) > maxLen:
		return bad(fmt.Sprintf("is longer than %d bytes", maxLen))
	case s[0] == '.':
		return bad("starts with '.'")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return bad(fmt.Sprintf("contains %q", c))
		}
	}
	return nil
}

// localPath checks that p (slash- or OS-separated) is a non-empty relative
// path that stays inside its root lexically and returns it cleaned. Opening it
// through an os.Root then keeps symbolic links inside as well.
func localPath(what, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%w: %s is empty", ErrEscape, what)
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || !filepath.IsLocal(p) {
		return "", fmt.Errorf("%w: %s %q must be a relative path without '..'", ErrEscape, what, p)
	}
	return filepath.Clean(p), nil
}

// splitPath splits a slash path into its elements; "." and "" give none.
func splitPath(p string) []string {
	p = path.Clean(p)
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// randomHex returns n random bytes as hex, for unique temporary names.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported systems
	return hex.EncodeToString(b)
}

func isTrash(name string) bool { return strings.HasPrefix(name, trashPrefix) }

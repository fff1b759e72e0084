//go:build !unix

package workspace

import (
	"context"
	"io/fs"
	"os"
)

// copyCheck is the result of checking a staged copy; without openat on
// this system the copy is not checked.
type copyCheck struct {
	next     map[string]copyStat
	restored []string
	changed  bool
}

// checkCopy does not check the copy on this system.
func (w *Workspace) checkCopy(context.Context, *os.Root, string, fs.FS, *scanned, map[string]copyStat, bool) (*copyCheck, error) {
	return &copyCheck{}, nil
}

// idOf has no file identities to offer on this system.
func idOf(fs.FileInfo) fileID { return fileID{} }

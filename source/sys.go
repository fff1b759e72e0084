package source

import (
	"errors"
	"path/filepath"
	"syscall"
)

// isNotDir reports an ENOTDIR from opening a path below a plain file.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

func filepathToSlash(p string) string { return filepath.ToSlash(p) }

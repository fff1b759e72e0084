package filetools

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/skillkit/skillkit/tools"
)

// writeArgs are the arguments of write_file.
type writeArgs struct {
	Path      string `json:"path" jsonschema:"The file to write, relative to the folder; missing folders are created."`
	Content   string `json:"content" jsonschema:"The whole content of the file."`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"Replace the file if it exists (default false: an existing file is an error)."`
}

// tempPrefix starts the names of write_file's temporary files, which
// live next to their target only until the rename.
const tempPrefix = ".filetools-"

func (s *fileSet) runWrite(_ context.Context, a writeArgs) (tools.Result, error) {
	p, bad := s.resolve("path", a.Path, false)
	if bad != nil {
		return *bad, nil
	}
	q := strconv.Quote(a.Path)
	if p == "." || strings.HasSuffix(a.Path, "/") {
		return tools.Errorf("Error: path %s names a folder; give the path of a file, such as \"notes/todo.md\"", q), nil
	}
	if n := int64(len(a.Content)); n > s.maxWrite {
		return tools.Errorf("Error: content is %d bytes, over the limit of %d bytes for %s; write a shorter file, or split it into several", n, s.maxWrite, s.tool(WriteFileName)), nil
	}
	if dir := path.Dir(p); dir != "." {
		if err := s.root.MkdirAll(dir, 0o755); err != nil {
			return s.fsError("path", a.Path, err), nil
		}
	}
	replaced, err := s.put(p, a.Content, a.Overwrite)
	switch {
	case errors.Is(err, errFolder):
		return tools.Errorf("Error: path %s is a folder; give the path of a file inside it", q), nil
	case errors.Is(err, fs.ErrExist):
		return tools.Errorf("Error: path %s already exists; pass overwrite true to replace it, or choose another path", q), nil
	case err != nil:
		return s.fsError("path", a.Path, err), nil
	}
	verb := "wrote"
	if replaced {
		verb = "replaced"
	}
	return tools.Result{Text: fmt.Sprintf("%s %s: %d bytes", verb, a.Path, len(a.Content))}, nil
}

// errFolder is put's error for a path that is a folder.
var errFolder = errors.New("is a folder")

// put writes content to p atomically: into a new temporary file in the
// same folder (through the root), synced, then moved into place. Without
// overwrite the move is a hard link, which fails when p exists — there is
// no moment between a check and the write; a file system without hard
// links falls back to a check and a rename. With overwrite a rename
// replaces p (a link at p is replaced, never written through), and the
// new file keeps the mode of the regular file it replaces. The temporary
// file is removed whatever happens. replaced reports that an existing
// file was replaced.
func (s *fileSet) put(p, content string, overwrite bool) (replaced bool, err error) {
	old, lerr := s.root.Lstat(p)
	if lerr == nil && old.IsDir() {
		return false, errFolder
	}
	tmp := path.Join(path.Dir(p), tempPrefix+rand.Text()+".tmp")
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, err
	}
	// After a link or a failure the temporary file is still there; after
	// a rename it is gone and this fails harmlessly.
	defer s.root.Remove(tmp)
	_, err = f.WriteString(content)
	if err == nil && overwrite && lerr == nil && old.Mode().IsRegular() {
		err = f.Chmod(old.Mode().Perm())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if overwrite {
		return lerr == nil, s.root.Rename(tmp, p)
	}
	if err = s.root.Link(tmp, p); err == nil || errors.Is(err, fs.ErrExist) {
		return false, err
	}
	if _, err := s.root.Lstat(p); err == nil {
		return false, fs.ErrExist
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return false, s.root.Rename(tmp, p)
}

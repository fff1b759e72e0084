//go:build !unix

package source

import (
	"io/fs"
	"os"
)

// dirFS is the file system Dir returns. Without openat on this system,
// host folders are read through os.DirFS, which follows symbolic links.
func dirFS(root string) fs.FS { return os.DirFS(root) }

// hostFS has no implementation on this system; host never returns one.
type hostFS struct{}

func (*hostFS) refreshRoot()                    {}
func (*hostFS) linked(string, fileID) fs.FS     { return nil }
func (*hostFS) identify(string) (fileID, error) { return fileID{}, fs.ErrInvalid }
func (*hostFS) Sub(string) (fs.FS, error)       { return nil, fs.ErrInvalid }
func (s Source) host() *hostFS                  { return nil }
func idOf(fs.FileInfo) fileID                   { return fileID{} }

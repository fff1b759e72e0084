//go:build unix

package source

import "io/fs"

// walkFS returns the host file system f resolving paths one element at
// a time, as it does where the kernel has no openat2.
func walkFS(f fs.FS) fs.FS {
	h := *f.(*hostFS)
	h.walk = true
	return &h
}

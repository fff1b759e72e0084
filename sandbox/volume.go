package sandbox

import "errors"

// ErrNotEmpty is returned by NewVolume for a directory that already holds
// files (and is not the volume's mount): mounting would hide them.
var ErrNotEmpty = errors.New("sandbox: directory not empty")

// VolumeOptions configures NewVolume. A nil *VolumeOptions means defaults.
type VolumeOptions struct {
	// Bytes is the size of the filesystem; default DefaultDiskBytes.
	Bytes int64
	// Inodes is the number of files, directories and links it can hold;
	// default DefaultDiskInodes.
	Inodes int64
	// InMemory makes a tmpfs instead of an image-backed filesystem: it is
	// mounted at once, but its contents live in memory and are gone when
	// it is unmounted. Use it for workspaces that end with the process.
	InMemory bool
}

// Volume is a size- and inode-bounded filesystem mounted at a directory,
// so that a workspace on it cannot fill the host's disk. Its contents live
// in an image file outside the directory and survive the process; a later
// NewVolume with the same image and directory mounts it again.
type Volume struct {
	dir, image string
	bytes      int64
	inodes     int64
	inMemory   bool
}

// Dir returns the directory the volume is mounted at.
func (v *Volume) Dir() string { return v.dir }

// Image returns the image file holding the volume's contents, or "" for
// an in-memory volume.
func (v *Volume) Image() string { return v.image }

// Bytes returns the volume's size in bytes as requested.
func (v *Volume) Bytes() int64 { return v.bytes }

// Inodes returns the volume's inode count as requested.
func (v *Volume) Inodes() int64 { return v.inodes }

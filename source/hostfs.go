package source

import (
	"errors"
	"io/fs"
	"path"
)

// ErrReplaced is wrapped by the errors of a skill's file system (SkillFS)
// when the skill folder is a symbolic link that now leads to another
// folder than the one discovery read. Discover the source again.
var ErrReplaced = errors.New("skill folder replaced since it was discovered; discover the skills again")

// errSymlinkInPath is the error of an open that met a symbolic link on
// its way: host folders are read without following links (see Dir).
var errSymlinkInPath = errors.New("symbolic link in the path, not followed")

// errNotRegular is the error of opening something that is neither a
// regular file nor a folder (a FIFO, socket or device).
var errNotRegular = errors.New("not a regular file")

// fileID identifies a file on its device, where the file system says.
type fileID struct{ dev, ino uint64 }

// SkillFS returns the file system of one skill Discover found in s,
// rooted at the skill folder.
//
// For a host folder (Dir) every open happens beneath the skill folder
// without following symbolic links at any component, with O_NONBLOCK,
// and yields only regular files and folders (see Dir). A skill folder
// that is itself a link — the one link discovery follows — is followed
// once per call, and the folder reached must still be the one discovery
// read: otherwise the call fails with an error wrapping ErrReplaced.
// Other sources get fs.Sub of their file system.
func (s Source) SkillFS(f *Found) (fs.FS, error) {
	if h := s.host(); h != nil {
		if f.link {
			return h.linked(f.Dir, f.dirID), nil
		}
		return h.Sub(f.Dir)
	}
	if f.Dir == "." {
		return s.FS, nil
	}
	return fs.Sub(s.FS, f.Dir)
}

// joinRel joins a slash path below a folder ("." for the folder itself)
// and a name in it.
func joinRel(dir, name string) string {
	switch {
	case dir == ".":
		return name
	case name == ".":
		return dir
	}
	return path.Join(dir, name)
}

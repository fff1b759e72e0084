package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"testing"
	"time"
)

// entry is one entry of a test archive.
type entry struct {
	name string
	body string
	// typ is a tar type flag (tar.TypeReg when 0); for zip archives
	// tar.TypeDir, TypeSymlink and TypeFifo are given as modes.
	typ byte
	// link is a link's target.
	link string
	// size overrides the declared size (tar), when not 0.
	size int64
	// mode is the file mode's permission bits (0644 when 0).
	mode int64
}

// skillMD is the SKILL.md of a valid skill.
func skillMD(name string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: The %s skill, for tests.\n---\nDo %s things.\n", name, name, name)
}

// makeZip builds a zip archive of the entries.
func makeZip(t testing.TB, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: time.Unix(1700000000, 0)}
		perm := fs.FileMode(0o644)
		if e.mode != 0 {
			perm = fs.FileMode(e.mode)
		}
		switch e.typ {
		case tar.TypeDir:
			h.SetMode(fs.ModeDir | 0o755)
		case tar.TypeSymlink:
			h.SetMode(fs.ModeSymlink | 0o777)
			e.body = e.link
		case tar.TypeFifo:
			h.SetMode(fs.ModeNamedPipe | 0o644)
		default:
			h.SetMode(perm)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// makeTar builds a tar archive of the entries, gzip-compressed when gz.
func makeTar(t testing.TB, entries []entry, gz bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	var tw *tar.Writer
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		tw = tar.NewWriter(zw)
	} else {
		tw = tar.NewWriter(&buf)
	}
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Linkname: e.link, Mode: mode, ModTime: time.Unix(1700000000, 0), Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// twoSkills are the entries of a small archive of two skills, below a
// top folder as GitHub's archives have them.
func twoSkills() []entry {
	return []entry{
		{name: "repo-main/", typ: tar.TypeDir},
		{name: "repo-main/skills/alpha/SKILL.md", body: skillMD("alpha")},
		{name: "repo-main/skills/alpha/scripts/run.sh", body: "#!/bin/sh\necho alpha\n", mode: 0o755},
		{name: "repo-main/skills/beta/SKILL.md", body: skillMD("beta")},
		{name: "repo-main/skills/beta/REFERENCE.md", body: "# Reference\n"},
	}
}

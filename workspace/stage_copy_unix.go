//go:build unix

package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// copyCheck compares a staged copy with the scanned source and its
// records, and puts back what differs. Every entry of the copy is reached
// relative to its folder's descriptor with O_NOFOLLOW, and files are
// opened with O_NONBLOCK: commands may have planted links and FIFOs.
type copyCheck struct {
	ctx  context.Context
	name string // the skill, whose copy is skills/<name>
	src  fs.FS
	prev map[string]copyStat
	// fresh is set for a copy just written: files without a record are
	// recorded, not rewritten.
	fresh bool
	// children maps a folder of the copy to the entries it must hold.
	children map[string]map[string]*node
	skills   int // descriptor of skills/, where discarded folders go
	trash    []string
	h        hash.Hash
	buf      []byte
	dirBuf   []byte

	next     map[string]copyStat
	restored []string
	changed  bool // next differs from prev: save the manifest
	// verified lists the files written or hashed by this check, whose
	// Verified is the change time of a probe made once the check is done.
	verified []string
	// inside counts the folders being created around the current entry:
	// their entries are not reported on their own.
	inside int
}

// checkCopy checks the staged copy of skill name against sc (whose sums
// are known) and the records prev, puts back what differs and returns
// the new records. With fresh set (a copy just written), it only records.
func (w *Workspace) checkCopy(ctx context.Context, root *os.Root, name string, src fs.FS, sc *scanned, prev map[string]copyStat, fresh bool) (*copyCheck, error) {
	c := &copyCheck{ctx: ctx, src: src, prev: prev, fresh: fresh, name: name,
		children: map[string]map[string]*node{".": {}}, next: make(map[string]copyStat, len(prev))}
	for i := range sc.nodes {
		n := &sc.nodes[i]
		dir := path.Dir(n.path)
		if c.children[dir] == nil {
			c.children[dir] = map[string]*node{}
		}
		c.children[dir][path.Base(n.path)] = n
		if n.kind == 'd' && c.children[n.path] == nil {
			c.children[n.path] = map[string]*node{}
		}
	}
	for _, l := range []string{outName, workName, "inputs"} {
		c.children["."][l] = &node{path: l, kind: 'l', target: workspaceLink(l)}
	}
	ws, err := openDir(unix.AT_FDCWD, w.dir, false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(ws)
	if c.skills, err = openDir(ws, skillsName, true); err != nil {
		return nil, err
	}
	defer unix.Close(c.skills)
	var st unix.Stat_t
	if err := fstatat(c.skills, name, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("%s/%s is not a folder any more", skillsName, name) // the caller replaces it
	}
	err = c.enter(c.skills, name, ".", &st)
	if err == nil && len(c.verified) > 0 {
		c.stampVerified()
	}
	for _, t := range c.trash {
		if rerr := root.RemoveAll(skillsName + "/" + t); err == nil && rerr != nil {
			err = rerr
		}
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(c.restored)
	c.restored = slices.Compact(c.restored)
	return c, nil
}

// enter checks the folder name of folder parent, at rel in the copy,
// whose lstat is st: its mode first (put back before it is opened, so
// that a folder a command made unreadable is read again), then each of
// its entries.
func (c *copyCheck) enter(parent int, name, rel string, st *unix.Stat_t) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	if rec, ok := c.prev[rel]; ok && fs.FileMode(rec.Mode) != modeOf(st) {
		mode := uint32(fs.FileMode(rec.Mode).Perm() | unixSpecial(fs.FileMode(rec.Mode)))
		if err := retryErr(func() error { return unix.Fchmodat(parent, name, mode, 0) }); err != nil {
			return err
		}
		c.restore(rel)
		if err := fstatat(parent, name, st); err != nil {
			return err
		}
	}
	fd, err := openDir(parent, name, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var got unix.Stat_t
	if err := fstat(fd, &got); err != nil {
		return err
	}
	if got.Ino != st.Ino || got.Dev != st.Dev {
		return fmt.Errorf("%s was replaced while it was checked", rel)
	}
	return c.folder(fd, rel, &got)
}

// folder checks the open folder fd, at rel in the copy, whose stat is st:
// each entry against the entries it must hold.
func (c *copyCheck) folder(fd int, rel string, st *unix.Stat_t) error {
	c.record(rel, st, false)
	if c.dirBuf == nil {
		c.dirBuf = make([]byte, 8192)
	}
	names, err := readNames(fd, c.dirBuf)
	if err != nil {
		return err
	}
	want := c.children[rel]
	for _, name := range names {
		if skipSource(name) {
			continue // the skill's own venv and caches, kept
		}
		p := joinRel(rel, name)
		n, ok := want[name]
		if !ok {
			if err := c.discard(fd, name); err != nil {
				return err
			}
			c.restore(p)
			continue
		}
		if err := c.entry(fd, name, n); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(want) {
		if !slices.Contains(names, name) {
			if err := c.create(fd, name, want[name]); err != nil {
				return err
			}
			c.restore(want[name].path)
		}
	}
	return nil
}

// entry checks the entry name of folder fd, which must be n.
func (c *copyCheck) entry(fd int, name string, n *node) error {
	var st unix.Stat_t
	err := fstatat(fd, name, &st)
	if errors.Is(err, unix.ENOENT) {
		c.restore(n.path)
		return c.create(fd, name, n)
	}
	if err != nil {
		return err
	}
	typ := st.Mode & unix.S_IFMT
	switch n.kind {
	case 'd':
		if typ == unix.S_IFDIR {
			return c.enter(fd, name, n.path, &st)
		}
	case 'l':
		if typ == unix.S_IFLNK {
			if target, err := readlinkat(fd, name); err == nil && target == n.target {
				return nil
			}
		}
	case 'f':
		rec, ok := c.prev[n.path]
		switch {
		case typ != unix.S_IFREG:
		case !ok && c.fresh:
			c.record(n.path, &st, true)
			return nil
		case !ok: // no record (an older manifest): rewritten, not reported
			return c.restoreFile(fd, name, n)
		case !sameStat(rec, &st):
		case rec.Verified != 0 && rec.CTime < rec.Verified:
			c.next[n.path] = rec // unchanged since it was last verified
			return nil
		default:
			same, err := c.sameContent(fd, name, &st, n)
			if err != nil {
				return err
			}
			if same {
				c.record(n.path, &st, true)
				return nil
			}
		}
		c.restore(n.path)
		return c.restoreFile(fd, name, n)
	}
	c.restore(n.path)
	if err := c.discard(fd, name); err != nil {
		return err
	}
	return c.create(fd, name, n)
}

// create makes the missing entry name of folder fd as n.
func (c *copyCheck) create(fd int, name string, n *node) error {
	switch n.kind {
	case 'd':
		if err := retryErr(func() error { return unix.Mkdirat(fd, name, 0o755) }); err != nil {
			return err
		}
		var st unix.Stat_t
		if err := fstatat(fd, name, &st); err != nil {
			return err
		}
		c.inside++
		defer func() { c.inside-- }()
		return c.enter(fd, name, n.path, &st)
	case 'l':
		return retryErr(func() error { return unix.Symlinkat(n.target, fd, name) })
	}
	return c.restoreFile(fd, name, n)
}

// discard removes the entry name of folder fd: a folder is moved to
// skills/ and removed when the check is done.
func (c *copyCheck) discard(fd int, name string) error {
	var st unix.Stat_t
	if err := fstatat(fd, name, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return retryErr(func() error { return unix.Unlinkat(fd, name, 0) })
	}
	t := oldPrefix + randomHex(6)
	if err := retryErr(func() error { return unix.Renameat(fd, name, c.skills, t) }); err != nil {
		return err
	}
	c.trash = append(c.trash, t)
	return nil
}

// restoreFile writes the source file of n to a temporary name in folder
// fd and renames it over name (which must not be a folder).
func (c *copyCheck) restoreFile(fd int, name string, n *node) error {
	var st unix.Stat_t
	if err := fstatat(fd, name, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := c.discard(fd, name); err != nil {
			return err
		}
	}
	tmp := stagePrefix + randomHex(6)
	out, err := retry(func() (int, error) {
		return unix.Openat(fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(fileMode(n.exec)))
	})
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(out), tmp)
	err = c.copySource(f, n)
	var written unix.Stat_t
	if err == nil {
		err = fstat(out, &written)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = retryErr(func() error { return unix.Renameat(fd, tmp, fd, name) })
	}
	if err != nil {
		_ = unix.Unlinkat(fd, tmp, 0)
		return err
	}
	// The rename changed the file's change time: record it after.
	if err := fstatat(fd, name, &st); err != nil {
		return err
	}
	if st.Ino != written.Ino {
		return fmt.Errorf("%s was replaced while it was restored", n.path)
	}
	c.record(n.path, &st, true)
	return nil
}

// stampVerified sets the Verified time of the files this check wrote or
// hashed: the change time the copy's own folder gets when its access time
// is set now, after their content was checked. Any later change to one of
// them gets a change time at least that late (file times come from one
// clock, which a sandboxed command cannot set), so a file whose change
// time is earlier than its Verified and whose stat is unchanged has not
// been touched since. Without that stamp the files stay unverified and
// are hashed again next time.
func (c *copyCheck) stampVerified() {
	var st unix.Stat_t
	if fstatat(c.skills, c.name, &st) != nil {
		return
	}
	times := []unix.Timespec{unix.NsecToTimespec(time.Now().UnixNano()), st.Mtim}
	if retryErr(func() error { return unix.UtimesNanoAt(c.skills, c.name, times, unix.AT_SYMLINK_NOFOLLOW) }) != nil {
		return
	}
	if fstatat(c.skills, c.name, &st) != nil {
		return
	}
	for _, rel := range c.verified {
		rec := c.next[rel]
		rec.Verified = st.Ctim.Nano()
		if rec != c.prev[rel] {
			c.changed = true
		}
		c.next[rel] = rec
	}
}

// copySource copies the source file of n to out; its content must hash
// to n.sum.
func (c *copyCheck) copySource(out io.Writer, n *node) error {
	in, err := openListed(c.src, n)
	if err != nil {
		return err
	}
	defer in.Close()
	h := c.hash()
	if c.buf == nil {
		c.buf = make([]byte, 64<<10)
	}
	m, err := io.CopyBuffer(io.MultiWriter(out, h), io.LimitReader(in, n.size+1), c.buf)
	if err != nil {
		return fmt.Errorf("copy %s: %w", n.path, err)
	}
	if m != n.size || hex.EncodeToString(h.Sum(nil)) != n.sum {
		return fmt.Errorf("%w: %s changed since it was hashed; stage again", ErrSourceChanged, n.path)
	}
	return nil
}

// sameContent reports whether the file name of folder fd, whose stat is
// st, holds the content of n.
func (c *copyCheck) sameContent(fd int, name string, st *unix.Stat_t, n *node) (bool, error) {
	f, err := retry(func() (int, error) {
		return unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return false, nil // replaced meanwhile: rewritten
	}
	defer unix.Close(f)
	var got unix.Stat_t
	if err := fstat(f, &got); err != nil || got.Mode&unix.S_IFMT != unix.S_IFREG || got.Ino != st.Ino || got.Size != st.Size {
		return false, nil
	}
	h := c.hash()
	if c.buf == nil {
		c.buf = make([]byte, 64<<10)
	}
	m, err := io.CopyBuffer(h, io.LimitReader(fdReader(f), n.size+1), c.buf)
	if err != nil {
		return false, err
	}
	return m == n.size && hex.EncodeToString(h.Sum(nil)) == n.sum, nil
}

func (c *copyCheck) hash() hash.Hash {
	if c.h == nil {
		c.h = sha256.New()
	}
	c.h.Reset()
	return c.h
}

// record notes the stat of rel; verified marks a regular file whose
// content this check wrote or hashed (see stampVerified).
func (c *copyCheck) record(rel string, st *unix.Stat_t, verified bool) {
	cs := copyStat{Mode: uint32(modeOf(st))}
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		cs = copyStat{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Mode: cs.Mode, Size: st.Size,
			MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano()}
	}
	if verified {
		c.verified = append(c.verified, rel)
	}
	if old, ok := c.prev[rel]; !ok || old != cs {
		c.changed = true
	}
	c.next[rel] = cs
}

func (c *copyCheck) restore(rel string) {
	if !c.fresh && c.inside == 0 {
		c.restored = append(c.restored, rel)
	}
}

// sameStat reports whether st is the file rec recorded.
func sameStat(rec copyStat, st *unix.Stat_t) bool {
	return rec.Dev == uint64(st.Dev) && rec.Ino == uint64(st.Ino) && rec.Mode == uint32(modeOf(st)) &&
		rec.Size == st.Size && rec.MTime == st.Mtim.Nano() && rec.CTime == st.Ctim.Nano()
}

// openDir opens the folder name of dirfd for listing; with noFollow the
// name must not be a symbolic link.
func openDir(dirfd int, name string, noFollow bool) (int, error) {
	fl := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK | unix.O_CLOEXEC
	if noFollow {
		fl |= unix.O_NOFOLLOW
	}
	return retry(func() (int, error) { return unix.Openat(dirfd, name, fl, 0) })
}

// readNames lists the open folder fd, using buf for the system call.
func readNames(fd int, buf []byte) ([]string, error) {
	var names []string
	for {
		n, err := retry(func() (int, error) { return unix.ReadDirent(fd, buf) })
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		b := make([]byte, size)
		n, err := retry(func() (int, error) { return unix.Readlinkat(dirfd, name, b) })
		if err != nil {
			return "", err
		}
		if n < size {
			return string(b[:n]), nil
		}
	}
}

// fdReader reads a descriptor.
type fdReader int

func (r fdReader) Read(b []byte) (int, error) {
	n, err := retry(func() (int, error) { return unix.Read(int(r), b) })
	if err != nil {
		return 0, err
	}
	if n == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func fstat(fd int, st *unix.Stat_t) error {
	return retryErr(func() error { return unix.Fstat(fd, st) })
}

func fstatat(dirfd int, name string, st *unix.Stat_t) error {
	return retryErr(func() error { return unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW) })
}

// retry repeats a system call interrupted by a signal.
func retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}

func retryErr(call func() error) error {
	_, err := retry(func() (int, error) { return 0, call() })
	return err
}

// modeOf converts a stat mode to an fs.FileMode, as package os does.
func modeOf(st *unix.Stat_t) fs.FileMode {
	m := uint32(st.Mode)
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// unixSpecial returns the setuid, setgid and sticky bits of m as stat
// mode bits.
func unixSpecial(m fs.FileMode) fs.FileMode {
	var out fs.FileMode
	if m&fs.ModeSetuid != 0 {
		out |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		out |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		out |= unix.S_ISVTX
	}
	return out
}

// idOf returns the device and inode in a stat from package os or from a
// file system that reports x/sys/unix stats, or the zero fileID.
func idOf(info fs.FileInfo) fileID {
	switch st := info.Sys().(type) {
	case *syscall.Stat_t:
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	case *unix.Stat_t:
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}

// joinRel joins a path in the copy ("." for its folder) and a name.
func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

func sortedKeys(m map[string]*node) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

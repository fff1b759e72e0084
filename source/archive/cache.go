package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillkit/skillkit/skill"
)

// metaFile records, in an archive's cache folder, what was fetched.
const metaFile = "meta.json"

// meta is the record of an archive's cached copy.
type meta struct {
	// Archive is the redacted URL or the path, for people reading the
	// cache.
	Archive string `json:"archive"`
	// ETag and LastModified are the server's validators of the copy.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// SHA256 is the archive's digest (lower-case hex).
	SHA256 string `json:"sha256"`
	// Tree is the unpacked folder's name in the cache folder.
	Tree string `json:"tree"`
	// Checked is when the server last confirmed the copy.
	Checked time.Time `json:"checked"`
}

// cache is one archive's folder in the cache directory.
type cache struct {
	dir string
	o   Options
	loc location
}

// readMeta returns the record of the cached copy whose tree exists, or
// nil.
func (c *cache) readMeta() *meta {
	data, err := os.ReadFile(filepath.Join(c.dir, metaFile))
	if err != nil {
		return nil
	}
	var m meta
	if json.Unmarshal(data, &m) != nil || m.Tree == "" || m.Tree != filepath.Base(m.Tree) || !strings.HasPrefix(m.Tree, "tree-") {
		return nil
	}
	if info, err := os.Lstat(filepath.Join(c.dir, m.Tree)); err != nil || !info.IsDir() {
		return nil
	}
	return &m
}

// writeMeta replaces the record atomically.
func (c *cache) writeMeta(m *meta) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(c.dir, "meta-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(c.dir, metaFile))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("archive %s: recording the cached copy: %w", c.loc.label, err)
	}
	return nil
}

// tree returns the path of a tree in the cache folder.
func (c *cache) tree(name string) string { return filepath.Join(c.dir, name) }

// usable reports whether the cached copy m may stand for the archive:
// it exists and matches the pin, if any.
func (c *cache) usable(m *meta) bool {
	return m != nil && (c.loc.pin == "" || m.SHA256 == c.loc.pin)
}

// remote returns the unpacked tree of a URL, fetching it when the cached
// copy is missing, stale or does not match the pin.
func (c *cache) remote(ctx context.Context) (string, error) {
	old := c.readMeta()
	if c.usable(old) && (c.loc.pin != "" || time.Since(old.Checked) < c.o.TTL) {
		return c.tree(old.Tree), nil
	}
	cond := old
	if !c.usable(old) {
		cond = nil
	}
	tree, err := c.fetch(ctx, cond)
	if err == nil {
		return tree, nil
	}
	var fe fallbackError
	if errors.As(err, &fe) && cond != nil && ctx.Err() == nil {
		c.o.Warn(fmt.Sprintf("archive %s: %v; using the copy cached %s (last checked %s)",
			c.loc.label, fe.err, c.tree(cond.Tree), cond.Checked.Local().Format(time.RFC3339)))
		return c.tree(cond.Tree), nil
	}
	return "", err
}

// fallbackError marks a failure to reach the server (a transport error,
// a timeout or a 5xx answer), after which a cached copy may be used.
type fallbackError struct{ err error }

func (e fallbackError) Error() string { return e.err.Error() }
func (e fallbackError) Unwrap() error { return e.err }

// fetch downloads the URL (conditionally on cond's validators), checks
// and unpacks it, records it and returns its tree.
func (c *cache) fetch(ctx context.Context, cond *meta) (string, error) {
	label := c.loc.label
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: c.o.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = c.o.ConnectTimeout
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return errors.New("redirected from https to " + req.URL.Scheme + "; refused")
		}
		return nil
	}}
	tctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodGet, c.loc.u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", label, unwrapURL(err))
	}
	// The pin covers the bytes as served: no transparent decompression.
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "skillkit")
	if cond != nil {
		if cond.ETag != "" {
			req.Header.Set("If-None-Match", cond.ETag)
		}
		if cond.LastModified != "" {
			req.Header.Set("If-Modified-Since", cond.LastModified)
		}
	}
	timedOut := func(err error) error {
		if errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return fallbackError{fmt.Errorf("archive %s: the download did not finish within %v (Options.Timeout; skillkit's default is %v)", label, c.o.Timeout, DefaultTimeout)}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("archive %s: %w", label, ctx.Err())
		}
		return fallbackError{fmt.Errorf("archive %s: %w", label, unwrapURL(err))}
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", timedOut(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && cond != nil:
		m := *cond
		m.Checked = time.Now()
		if err := c.writeMeta(&m); err != nil {
			return "", err
		}
		return c.tree(m.Tree), nil
	case resp.StatusCode >= 500:
		return "", fallbackError{fmt.Errorf("archive %s: the server answered %s", label, resp.Status)}
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("archive %s: the server answered %s; check the URL", label, resp.Status)
	}
	if resp.ContentLength > c.o.MaxArchiveBytes {
		return "", c.tooBig(resp.ContentLength)
	}
	f, err := os.CreateTemp(c.dir, "download-*.tmp")
	if err != nil {
		return "", fmt.Errorf("archive %s: the cache: %w", label, err)
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, c.o.MaxArchiveBytes+1))
	if err != nil {
		return "", timedOut(err)
	}
	if n > c.o.MaxArchiveBytes {
		return "", c.tooBig(n)
	}
	m := &meta{Archive: label, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), Checked: time.Now()}
	return c.install(ctx, f, n, h, m)
}

// tooBig is the error of an archive over MaxArchiveBytes.
func (c *cache) tooBig(n int64) error {
	return fmt.Errorf("archive %s: %w: the archive holds more than %d bytes (at least %d; Options.MaxArchiveBytes)", c.loc.label, ErrLimit, c.o.MaxArchiveBytes, n)
}

// install checks the archive f (size bytes, hashed into h) against the
// pin, unpacks it unless a tree of the same content exists, records it in
// m and returns its tree.
func (c *cache) install(ctx context.Context, f *os.File, size int64, h hash.Hash, m *meta) (string, error) {
	m.SHA256 = hex.EncodeToString(h.Sum(nil))
	if c.loc.pin != "" && m.SHA256 != c.loc.pin {
		return "", fmt.Errorf("archive %s: %w: its sha256 is %s, the pin says %s; check the pin or the URL", c.loc.label, ErrChecksum, m.SHA256, c.loc.pin)
	}
	prev := c.readMeta()
	m.Tree = "tree-" + m.SHA256[:32]
	tree := c.tree(m.Tree)
	if _, err := os.Lstat(tree); err != nil {
		tmp, err := os.MkdirTemp(c.dir, "unpack-*.tmp")
		if err != nil {
			return "", fmt.Errorf("archive %s: the cache: %w", c.loc.label, err)
		}
		if err := unpack(ctx, c.loc.label, f, size, tmp, c.o); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
		if tmp, err = c.nestTopSkill(tmp); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
		if err := os.Chmod(tmp, 0o755); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
		if err := os.Rename(tmp, tree); err != nil {
			// Another process unpacked the same content first.
			os.RemoveAll(tmp)
			if _, serr := os.Lstat(tree); serr != nil {
				return "", fmt.Errorf("archive %s: the cache: %w", c.loc.label, err)
			}
		}
	}
	if err := c.writeMeta(m); err != nil {
		return "", err
	}
	c.sweep(m.Tree, prev)
	return tree, nil
}

// nestTopSkill moves an unpacked archive whose top holds a SKILL.md —
// one skill, packed from inside its folder — into a folder named for the
// skill (its front matter's name, else the archive's), so that the
// skill's folder matches its name as a skill's must. It returns the
// folder that now holds the tree.
func (c *cache) nestTopSkill(tmp string) (string, error) {
	fi, err := os.Lstat(filepath.Join(tmp, skill.FileName))
	if err != nil || !fi.Mode().IsRegular() {
		return tmp, nil
	}
	name := ""
	if data, err := os.ReadFile(filepath.Join(tmp, skill.FileName)); err == nil {
		if doc, _, err := skill.Parse(data, skill.ParseOptions{}); err == nil && skill.ValidName(doc.Name) {
			name = doc.Name
		}
	}
	if name == "" {
		label, _, _ := strings.Cut(c.loc.label, "#")
		label, _, _ = strings.Cut(label, "?")
		base := strings.ToLower(path.Base(strings.TrimSuffix(label, "/")))
		for _, ext := range []string{".tar.gz", ".tgz", ".tar", ".zip"} {
			base = strings.TrimSuffix(base, ext)
		}
		if !skill.ValidName(base) {
			return tmp, nil // discovery says what is wrong with it
		}
		name = base
	}
	outer, err := os.MkdirTemp(c.dir, "unpack-*.tmp")
	if err != nil {
		return tmp, fmt.Errorf("archive %s: the cache: %w", c.loc.label, err)
	}
	if err := os.Rename(tmp, filepath.Join(outer, name)); err != nil {
		os.RemoveAll(outer)
		return tmp, fmt.Errorf("archive %s: the cache: %w", c.loc.label, err)
	}
	return outer, nil
}

// keepTrees is how long an unpacked tree stays after a newer one
// replaced it: a process that opened it (a server running for days) may
// still read it.
const keepTrees = 7 * 24 * time.Hour

// sweep removes the trees other than keep and the previous copy that were
// unpacked more than keepTrees ago (a running process may still read
// them), and temporary files of killed processes.
func (c *cache) sweep(keep string, prev *meta) {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == keep || (prev != nil && name == prev.Tree):
		case strings.HasPrefix(name, "tree-"):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > keepTrees {
				os.RemoveAll(filepath.Join(c.dir, name))
			}
		case strings.HasSuffix(name, ".tmp"):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > 24*time.Hour {
				os.RemoveAll(filepath.Join(c.dir, name))
			}
		}
	}
}

// local returns the unpacked tree of a local archive file, unpacking it
// when its content has no tree yet.
func (c *cache) local(ctx context.Context) (string, error) {
	f, err := os.Open(c.loc.path)
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", c.loc.label, unwrapPath(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", c.loc.label, err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("archive %s: not a regular file; give an archive file or a folder", c.loc.label)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, c.o.MaxArchiveBytes+1))
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", c.loc.label, err)
	}
	if n > c.o.MaxArchiveBytes {
		return "", c.tooBig(n)
	}
	m := &meta{Archive: c.loc.label, Checked: time.Now()}
	return c.install(ctx, f, n, h, m)
}

// unwrapURL drops the *url.Error wrapper of net/http, whose text holds
// the URL with its user name and query.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// unwrapPath drops the path of an *fs.PathError (the message names the
// archive already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

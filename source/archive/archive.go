// Package archive reads skills from an archive — .zip, .tar, .tar.gz or
// .tgz — fetched over HTTP(S) or read from a local file, as a
// source.Source.
//
// Open downloads the archive into a cache directory (bounded by a connect
// and a total timeout), checks an optional "#sha256=<hex>" pin on the
// bytes received before anything is unpacked, and unpacks it into a
// fresh folder of the cache that is renamed into place only when complete.
// Every entry is checked first: paths with "..", absolute paths, symbolic
// and hard links, devices, FIFOs and duplicate paths are refused with an
// error naming the archive and the entry, and the limits on entries and
// bytes are enforced on the bytes actually read, never on the sizes an
// archive declares. The source is then source.Dir over the unpacked tree,
// so skills are read from it as from any host folder.
//
// A URL is fetched again only when its copy is older than Options.TTL, and
// then conditionally (ETag / Last-Modified): a 304 answer reuses the copy.
// When the server cannot be reached, the cached copy is used with a
// warning. A pinned URL whose copy matches the pin is never fetched again.
//
// User names, passwords and query values of a URL never appear in labels,
// warnings or errors (source.RedactURL).
package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillkit/skillkit/source"
)

// Defaults of Options.
const (
	// DefaultConnectTimeout bounds connecting to the server (TCP and
	// TLS).
	DefaultConnectTimeout = 10 * time.Second
	// DefaultTimeout bounds a whole download, from the request to the
	// last byte.
	DefaultTimeout = 2 * time.Minute
	// DefaultTTL is how long a fetched copy is used before the server is
	// asked again.
	DefaultTTL = time.Hour
	// DefaultMaxArchiveBytes caps the archive file (what is downloaded).
	DefaultMaxArchiveBytes int64 = 100 << 20
	// DefaultMaxBytes caps the summed size of the files unpacked.
	DefaultMaxBytes int64 = 512 << 20
	// DefaultMaxFiles caps the entries (files and folders) of an archive.
	DefaultMaxFiles = 10000
	// DefaultMaxFileBytes caps one unpacked file.
	DefaultMaxFileBytes int64 = 32 << 20
)

// The errors an archive is refused with; the error returned names the
// archive (and the entry, as an *EntryError) and wraps one of these.
var (
	// ErrUnsafePath: an entry's path is absolute, has a ".." element, a
	// backslash, a NUL or an empty element.
	ErrUnsafePath = errors.New("unsafe path: archives must hold relative paths that stay inside the archive")
	// ErrLink: an entry is a symbolic or hard link.
	ErrLink = errors.New("links are not allowed in skill archives")
	// ErrSpecial: an entry is a device, FIFO, socket or another kind of
	// file that is neither a regular file nor a folder.
	ErrSpecial = errors.New("only regular files and folders are allowed in skill archives")
	// ErrDuplicate: two entries have the same path, or a path is both a
	// file and a folder.
	ErrDuplicate = errors.New("duplicate path")
	// ErrLimit: the archive is over one of the limits of Options.
	ErrLimit = errors.New("over a limit")
	// ErrChecksum: the archive's sha256 differs from its pin.
	ErrChecksum = errors.New("sha256 does not match the pin")
	// ErrFormat: the file is not a zip, tar or gzip-compressed tar.
	ErrFormat = errors.New("not a .zip, .tar, .tar.gz or .tgz archive")
)

// EntryError is the error of one entry of an archive.
type EntryError struct {
	// Archive names the archive (a redacted URL or a path).
	Archive string
	// Entry is the entry's name as the archive gives it.
	Entry string
	// Err says what is wrong; it wraps one of the package's errors.
	Err error
}

// Error names the archive and the entry.
func (e *EntryError) Error() string {
	return fmt.Sprintf("archive %s: entry %q: %v", e.Archive, e.Entry, e.Err)
}

// Unwrap returns Err.
func (e *EntryError) Unwrap() error { return e.Err }

// Options configures Open. A nil *Options, like the zero value, means the
// defaults; negative values are errors.
type Options struct {
	// CacheDir holds the downloaded and unpacked archives. Empty means
	// DefaultCacheDir. CacheDirFromEnv reads $SKILLKIT_CACHE_DIR.
	CacheDir string
	// TTL is how long a fetched copy is used without asking the server;
	// after it, the server is asked conditionally. 0 means DefaultTTL.
	TTL time.Duration
	// ConnectTimeout bounds connecting (TCP and TLS handshake); 0 means
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Timeout bounds a whole download; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxArchiveBytes caps the archive's own size; 0 means
	// DefaultMaxArchiveBytes.
	MaxArchiveBytes int64
	// MaxBytes caps the summed size of the unpacked files; 0 means
	// DefaultMaxBytes.
	MaxBytes int64
	// MaxFiles caps the archive's entries, files and folders; 0 means
	// DefaultMaxFiles.
	MaxFiles int
	// MaxFileBytes caps each unpacked file; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// Warn receives warnings, such as a cached copy used because the
	// server could not be reached. Nil drops them.
	Warn func(msg string)
}

// resolve returns the options with defaults filled in, or an error naming
// the first invalid field.
func (o *Options) resolve() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"TTL", int64(r.TTL)}, {"ConnectTimeout", int64(r.ConnectTimeout)}, {"Timeout", int64(r.Timeout)},
		{"MaxArchiveBytes", r.MaxArchiveBytes}, {"MaxBytes", r.MaxBytes}, {"MaxFiles", int64(r.MaxFiles)}, {"MaxFileBytes", r.MaxFileBytes},
	} {
		if f.v < 0 {
			return r, fmt.Errorf("archive: Options.%s is %d; use 0 for the default or a positive value", f.name, f.v)
		}
	}
	def := func(p *int64, d int64) {
		if *p == 0 {
			*p = d
		}
	}
	def((*int64)(&r.TTL), int64(DefaultTTL))
	def((*int64)(&r.ConnectTimeout), int64(DefaultConnectTimeout))
	def((*int64)(&r.Timeout), int64(DefaultTimeout))
	def(&r.MaxArchiveBytes, DefaultMaxArchiveBytes)
	def(&r.MaxBytes, DefaultMaxBytes)
	def(&r.MaxFileBytes, DefaultMaxFileBytes)
	if r.MaxFiles == 0 {
		r.MaxFiles = DefaultMaxFiles
	}
	if r.CacheDir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return r, err
		}
		r.CacheDir = d
	}
	if r.Warn == nil {
		r.Warn = func(string) {}
	}
	return r, nil
}

// DefaultCacheDir is the cache directory used when Options.CacheDir is
// empty: skillkit/archives in os.UserCacheDir.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("archive: no cache directory (%w); set $SKILLKIT_CACHE_DIR", err)
	}
	return filepath.Join(d, "skillkit", "archives"), nil
}

// CacheDirFromEnv returns the cache directory the environment configures:
// $SKILLKIT_CACHE_DIR, else $SKILLS_CACHE_DIR (the name seed 003 gives
// it), else "" (Options then uses DefaultCacheDir).
func CacheDirFromEnv(getenv func(string) string) string {
	if d := getenv("SKILLKIT_CACHE_DIR"); d != "" {
		return d
	}
	return getenv("SKILLS_CACHE_DIR")
}

// IsArchivePath reports whether name ends in an archive extension this
// package reads (.zip, .tar, .tar.gz, .tgz; any case), so a caller can
// tell an archive file from a folder by name.
func IsArchivePath(name string) bool {
	n := strings.ToLower(name)
	for _, ext := range []string{".zip", ".tar", ".tar.gz", ".tgz"} {
		if strings.HasSuffix(n, ext) {
			return true
		}
	}
	return false
}

// location is what Open was asked for.
type location struct {
	// u is the URL without its fragment; nil for a local file.
	u *url.URL
	// path is the local file's absolute path.
	path string
	// pin is the lower-case hex sha256 the archive must have, or "".
	pin string
	// label names the archive in errors: the redacted URL or the path.
	label string
	// key names the archive's folder in the cache.
	key string
}

// parseLocation reads an http(s) URL or a local path, with an optional
// "#sha256=<hex>" pin.
func parseLocation(raw string) (location, error) {
	var loc location
	rest, frag, hasFrag := strings.Cut(raw, "#")
	if source.IsURL(raw) {
		u, err := url.Parse(rest)
		if err != nil {
			return loc, fmt.Errorf("archive %s: not a valid URL", source.RedactURL(raw))
		}
		if u.Host == "" {
			return loc, fmt.Errorf("archive %s: the URL has no host", source.RedactURL(raw))
		}
		loc.u, loc.label = u, source.RedactURL(rest)
		sum := sha256.Sum256([]byte("url:" + u.String()))
		loc.key = hex.EncodeToString(sum[:16])
	} else {
		if !hasFrag || !strings.HasPrefix(frag, "sha256=") {
			rest, frag, hasFrag = raw, "", false // a '#' in a file name
		}
		abs, err := filepath.Abs(rest)
		if err != nil {
			return loc, fmt.Errorf("archive %s: %w", rest, err)
		}
		loc.path, loc.label = abs, abs
		sum := sha256.Sum256([]byte("file:" + abs))
		loc.key = hex.EncodeToString(sum[:16])
	}
	if hasFrag {
		hexSum, ok := strings.CutPrefix(frag, "sha256=")
		if _, err := hex.DecodeString(hexSum); !ok || err != nil || len(hexSum) != 64 {
			return loc, fmt.Errorf("archive %s: the fragment %q is not a pin; write #sha256= and the 64 hex digits of the archive's SHA-256, or leave the fragment out", loc.label, "#"+frag)
		}
		loc.pin = strings.ToLower(hexSum)
	}
	return loc, nil
}

// Open returns a source over the skills of the archive at where: an
// http:// or https:// URL or a local file path, either followed by an
// optional "#sha256=<64 hex digits>" pin of the archive's bytes. The
// archive is unpacked into the cache (see the package comment) and the
// source is source.Dir over the unpacked tree, labelled with the
// redacted URL or the file's absolute path, rank 0; set Rank and MaxDepth
// on it as for any source.
//
// Errors name the archive and wrap ErrUnsafePath, ErrLink, ErrSpecial,
// ErrDuplicate (as an *EntryError naming the entry), ErrLimit, ErrChecksum
// or ErrFormat where one of those is the reason.
func Open(ctx context.Context, where string, opts *Options) (source.Source, error) {
	o, err := opts.resolve()
	if err != nil {
		return source.Source{}, err
	}
	loc, err := parseLocation(where)
	if err != nil {
		return source.Source{}, err
	}
	c := &cache{dir: filepath.Join(o.CacheDir, loc.key), o: o, loc: loc}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return source.Source{}, fmt.Errorf("archive %s: the cache: %w (set $SKILLKIT_CACHE_DIR to a writable folder)", loc.label, err)
	}
	for _, dir := range []string{o.CacheDir, c.dir} {
		if err := ownedFolder(dir); err != nil {
			return source.Source{}, fmt.Errorf("archive %s: the cache: %w", loc.label, err)
		}
	}
	var tree string
	if loc.u == nil {
		tree, err = c.local(ctx)
	} else {
		tree, err = c.remote(ctx)
	}
	if err != nil {
		return source.Source{}, err
	}
	src, err := source.Dir(tree, loc.label, 0)
	if err != nil {
		return source.Source{}, fmt.Errorf("archive %s: the unpacked copy: %w", loc.label, err)
	}
	return src, nil
}

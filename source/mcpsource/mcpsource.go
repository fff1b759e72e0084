// Package mcpsource serves the skills of a remote MCP server as a skill
// source: the host side of the MCP skills extension
// (io.modelcontextprotocol/skills, SEP-2640).
//
// New connects to a server that declares the extension, lists its skills
// with skills/list (every page, bounded in pages, bytes and time) and
// returns a Remote whose Source joins a registry like any folder of
// skills. Its file system is built from the listing: one folder per
// skill, named after the last segment of the skill's path (nested paths
// such as skill://acme/billing/refunds are flattened to "refunds"; two
// skills of one name are an error), holding the files of the skill's
// manifest.
//
// What is fetched when: New fetches nothing but the listing. Listing
// folders, Stat and ReadDir answer from the listing, without network
// I/O. Opening a file performs one resources/read of that file, from the
// server that listed it and no other: discovery (registry.New, Refresh)
// opens each skill's SKILL.md — the lazy read made when a skill enters
// the registry — and the registry opens SKILL.md again for a body and
// any other file when a document or file is asked for.
//
// Every read is verified before its bytes are returned: the size and the
// SHA-256 must be those of the listing, the server must answer for the
// URI asked, and a SKILL.md's front matter must equal, field by field,
// the frontmatter the listing gave (compared as JSON values). A file the
// listing does not hold is refused without being requested. A failure is
// an error wrapping ErrVerify that names the server and the file's URI.
// Content stays untrusted after verification: it proves only that the
// server served what it listed.
//
// A skill whose resources are "dynamic" serves its SKILL.md only; its
// size and SHA-256 are pinned on the first read (later reads must match)
// and its other files are refused (ErrDynamic).
//
// The allowed-tools field of a remote skill is ignored: the SKILL.md
// served to the registry has the field commented out in place (a '#'
// over the first byte of each of its lines, so the size stays the
// listed one), after its bytes were verified, so a remote skill never
// pre-approves a tool. Credentials in the server URL (user, password,
// query, fragment) never appear in labels or error messages.
package mcpsource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// Extension is the name under which a server declares the skills
// extension in capabilities.extensions.
const Extension = "io.modelcontextprotocol/skills"

// Defaults of Options.
const (
	DefaultMaxPages     = 100
	DefaultMaxListBytes = 16 << 20
	DefaultListTimeout  = 30 * time.Second
	DefaultReadTimeout  = 60 * time.Second
	DefaultMaxFiles     = skill.DefaultMaxFiles // 512, the extension's limit
	DefaultMaxBytes     = skill.DefaultMaxBytes // 16 MiB, the extension's limit
)

// ErrVerify is wrapped by the error of a read that failed verification:
// a size, SHA-256 or front matter other than the listing's, an answer for
// another URI, or a file the listing does not hold (ErrNotListed).
var ErrVerify = errors.New("verification failed")

// ErrNotListed is wrapped by the error of opening a file that the skill's
// listing does not hold; it matches ErrVerify and fs.ErrNotExist too.
var ErrNotListed error = &sentinel{msg: "not in the skill's listing", also: []error{ErrVerify, fs.ErrNotExist}}

// ErrDynamic is wrapped by the error of opening a file other than
// SKILL.md of a skill whose resources the server lists as "dynamic"; it
// matches fs.ErrNotExist too.
var ErrDynamic error = &sentinel{msg: "the server lists this skill's resources as dynamic; only its SKILL.md is served", also: []error{fs.ErrNotExist}}

// ErrNoExtension is returned by New for a server that does not declare
// the skills extension.
var ErrNoExtension = errors.New("the server does not declare the " + Extension + " extension")

// ErrLimit is wrapped by the error of a listing over Options.MaxPages or
// Options.MaxListBytes.
var ErrLimit = errors.New("listing over a limit")

// ErrClosed is wrapped by the error of a read after Close.
var ErrClosed = errors.New("connection closed")

// sentinel is an error value that also matches other errors.
type sentinel struct {
	msg  string
	also []error
}

func (s *sentinel) Error() string        { return s.msg }
func (s *sentinel) Is(target error) bool { return slices.Contains(s.also, target) }

// Options adjusts New. A nil *Options means the defaults; negative values
// are errors.
type Options struct {
	// Label names the source in listings and diagnostics; empty means the
	// server URL without credentials, query or fragment
	// ("https://host/mcp"), or "mcp" when only Transport is given.
	Label string
	// Rank orders the source among others (see source.Source.Rank).
	Rank int
	// Transport, when set, is used instead of a streamable HTTP
	// connection to the URL (an in-memory or command transport); the URL
	// then only names the server.
	Transport sdk.Transport
	// HTTPClient makes the streamable HTTP requests; nil means
	// http.DefaultClient. Put authentication in its RoundTripper.
	HTTPClient *http.Client
	// MaxPages bounds the pages of one listing (default DefaultMaxPages).
	MaxPages int
	// MaxListBytes bounds the summed size of the listing's results, in
	// bytes of JSON (default DefaultMaxListBytes).
	MaxListBytes int64
	// ListTimeout bounds connecting and listing together, for New and
	// for each Relist (default DefaultListTimeout).
	ListTimeout time.Duration
	// ReadTimeout bounds one file read (default DefaultReadTimeout).
	ReadTimeout time.Duration
	// MaxFiles and MaxBytes bound the files and summed bytes one skill
	// may list; a skill over them is left out and reported by Skipped.
	// The defaults are the extension's limits (512 files, 16 MiB), which
	// a host must accept.
	MaxFiles int
	// MaxBytes: see MaxFiles.
	MaxBytes int64
}

// withDefaults checks o and fills its zero fields.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.MaxPages < 0:
		return o, fmt.Errorf("mcpsource: Options.MaxPages is %d; use 0 for the default (%d) or a positive count", o.MaxPages, DefaultMaxPages)
	case o.MaxListBytes < 0:
		return o, fmt.Errorf("mcpsource: Options.MaxListBytes is %d; use 0 for the default (%d) or a positive byte count", o.MaxListBytes, DefaultMaxListBytes)
	case o.ListTimeout < 0:
		return o, fmt.Errorf("mcpsource: Options.ListTimeout is %v; use 0 for the default (%v) or a positive duration", o.ListTimeout, DefaultListTimeout)
	case o.ReadTimeout < 0:
		return o, fmt.Errorf("mcpsource: Options.ReadTimeout is %v; use 0 for the default (%v) or a positive duration", o.ReadTimeout, DefaultReadTimeout)
	case o.MaxFiles < 0:
		return o, fmt.Errorf("mcpsource: Options.MaxFiles is %d; use 0 for the default (%d) or a positive count", o.MaxFiles, DefaultMaxFiles)
	case o.MaxBytes < 0:
		return o, fmt.Errorf("mcpsource: Options.MaxBytes is %d; use 0 for the default (%d) or a positive byte count", o.MaxBytes, DefaultMaxBytes)
	}
	if o.MaxPages == 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxListBytes == 0 {
		o.MaxListBytes = DefaultMaxListBytes
	}
	if o.ListTimeout == 0 {
		o.ListTimeout = DefaultListTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.MaxFiles == 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return o, nil
}

// Remote is the connection to one skills server and the source of its
// skills. It is safe for concurrent use; Close it when done.
type Remote struct {
	label string
	red   *redactor
	opts  Options
	cs    *sdk.ClientSession

	// base is cancelled by Close, ending reads in flight.
	base   context.Context
	cancel context.CancelFunc

	cat     atomic.Pointer[catalog]
	relist  sync.Mutex
	closeMu sync.Once
	closeE  error
}

// New connects to the skills server at url (streamable HTTP, or
// opts.Transport) and lists its skills; nothing else is requested. The
// connection and the listing together are bounded by opts.ListTimeout.
// A server that does not declare the extension fails with
// ErrNoExtension; a listing over a bound fails with ErrLimit; two skills
// whose folders would share a name fail with an error naming both URIs.
// A listed skill that cannot be served (a malformed entry, over
// MaxFiles or MaxBytes) is left out and reported by Skipped.
func New(ctx context.Context, url string, opts *Options) (*Remote, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Remote{opts: o, red: &redactor{label: "mcp"}}
	if url != "" {
		red, err := newRedactor(url)
		if err != nil {
			return nil, fmt.Errorf("mcpsource: the server URL is not valid (%v); give http(s)://host/path", err)
		}
		r.red = red
	}
	transport := o.Transport
	if transport == nil {
		if url == "" {
			return nil, errors.New("mcpsource: no server URL and no Options.Transport; give the URL of an MCP server")
		}
		u, _ := parseHTTP(url)
		if u == nil {
			return nil, fmt.Errorf("mcpsource: server URL %s is not an http or https URL with a host", r.red.label)
		}
		transport = &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: boundedClient(o.HTTPClient, responseLimit(o)), DisableStandaloneSSE: true}
	}
	r.label = r.red.label
	if o.Label != "" {
		r.label = o.Label
	}
	ctx, cancel := context.WithTimeout(ctx, o.ListTimeout)
	defer cancel()
	caps := &sdk.ClientCapabilities{}
	caps.AddExtension(Extension, nil)
	client := sdk.NewClient(&sdk.Implementation{Name: "skillkit", Version: "1"}, &sdk.ClientOptions{Capabilities: caps})
	if err := sdk.AddSendingCustomMethod[*listParams, *listResult](client, methodList); err != nil {
		return nil, err
	}
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, r.errorf("connecting: %w%s", r.red.scrub(err), overTime(ctx, o.ListTimeout))
	}
	r.cs = cs
	r.base, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if !declares(cs.InitializeResult()) {
		r.Close()
		return nil, r.errorf("%w (capabilities.extensions); it serves no skills", ErrNoExtension)
	}
	cat, err := r.list(ctx)
	if err != nil {
		r.Close()
		if hint := overTime(ctx, o.ListTimeout); hint != "" {
			return nil, fmt.Errorf("%w%s", err, hint)
		}
		return nil, err
	}
	r.cat.Store(cat)
	return r, nil
}

// overTime says, when ctx ran out, that the connection and listing took
// longer than Options.ListTimeout.
func overTime(ctx context.Context, limit time.Duration) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf(" (connecting and listing took longer than Options.ListTimeout, %v; the server is slow or stalled)", limit)
	}
	return ""
}

// declares reports whether the server declared the skills extension.
func declares(res *sdk.InitializeResult) bool {
	if res == nil || res.Capabilities == nil {
		return false
	}
	_, ok := res.Capabilities.Extensions[Extension]
	return ok
}

// errorf formats an error naming the server.
func (r *Remote) errorf(format string, args ...any) error {
	return fmt.Errorf("mcp server %s: "+format, append([]any{r.label}, args...)...)
}

// Label returns the name the source goes by (Options.Label, or the URL
// without credentials).
func (r *Remote) Label() string { return r.label }

// Source returns the skills as a source for a registry (registry.New,
// skillkit.Options.Sources): one folder per skill at the root of its
// file system, MaxDepth 1, no host path. Its file system implements
// fs.StatFS, fs.ReadDirFS, fs.ReadFileFS and fs.SubFS; only opening or
// reading a file does network I/O (see the package comment). Its
// modification times are not times: each is derived from the listed
// SHA-256 (a folder's from its skill's listing), so that a refreshed
// listing that changes a file changes its time, which is what the
// registry's Refresh compares.
func (r *Remote) Source() source.Source {
	return source.Source{Label: r.label, FS: &remoteFS{r: r}, Rank: r.opts.Rank, MaxDepth: 1}
}

// Relist lists the server's skills again and replaces the listing the
// source serves, bounded as New's listing was; on error the previous
// listing stays. Refresh the registry afterwards: skills whose files
// changed are then read anew, and reads through an older snapshot of a
// changed file fail (their size or digest no longer matches).
func (r *Remote) Relist(ctx context.Context) error {
	r.relist.Lock()
	defer r.relist.Unlock()
	if err := r.base.Err(); err != nil {
		return r.errorf("%w", ErrClosed)
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.ListTimeout)
	defer cancel()
	cat, err := r.list(ctx)
	if err != nil {
		return err
	}
	r.cat.Store(cat)
	return nil
}

// Close ends the connection; reads in flight and later reads fail.
func (r *Remote) Close() error {
	r.closeMu.Do(func() {
		if r.cancel != nil {
			r.cancel()
		}
		if r.cs != nil {
			if err := r.cs.Close(); err != nil {
				r.closeE = r.errorf("closing: %w", r.red.scrub(err))
			}
		}
	})
	return r.closeE
}

// Skill is one skill of the listing, as the source serves it.
type Skill struct {
	// URI is the skill's SKILL.md: skill://<skill-path>/SKILL.md.
	URI string
	// Dir is the skill's folder in the source's file system: the last
	// segment of the skill path.
	Dir string
	// Name and Description are the listed front matter's fields.
	Name, Description string
	// Dynamic is set when the server lists the skill's resources as
	// "dynamic": only SKILL.md is served.
	Dynamic bool
	// Files are the listed files, sorted by path (SKILL.md alone, of
	// unknown size and digest, for a dynamic skill).
	Files []File
}

// File is one listed file of a skill.
type File struct {
	// Path is relative to the skill folder.
	Path string
	// URI is the resource read for it.
	URI string
	// Digest is "sha256:<64 lower-case hex digits>" ("" when dynamic).
	Digest string
	// Size is in bytes (-1 when dynamic).
	Size int64
}

// Skipped is a listed skill the source leaves out, and why.
type Skipped struct {
	// URI is the entry's uri as listed (possibly empty or malformed).
	URI string
	// Reason says what is wrong with the entry.
	Reason string
}

// Skills returns the skills of the current listing, sorted by folder.
func (r *Remote) Skills() []Skill {
	cat := r.cat.Load()
	out := make([]Skill, 0, len(cat.dirs))
	for _, d := range cat.dirs {
		out = append(out, cat.skills[d].public())
	}
	return out
}

// Skipped returns the listed skills the current listing leaves out, each
// with the reason, in listing order; a caller shows them as warnings.
func (r *Remote) Skipped() []Skipped { return slices.Clone(r.cat.Load().skipped) }

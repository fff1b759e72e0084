package mcpsource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/skill"
)

const methodList = "skills/list"

// listParams are the parameters of skills/list.
type listParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// listResult is one page of skills/list. Entries stay raw until the
// whole listing is in, and size records the page's bytes of JSON.
type listResult struct {
	sdk.ResultBase
	ResultType string            `json:"resultType,omitempty"`
	Skills     []json.RawMessage `json:"skills"`
	NextCursor string            `json:"nextCursor,omitempty"`
	size       int
}

// UnmarshalJSON decodes a page and records its size.
func (l *listResult) UnmarshalJSON(b []byte) error {
	type plain listResult
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*l = listResult(p)
	l.size = len(b)
	return nil
}

// wireSkill is a Skill entry of skills/list.
type wireSkill struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

// wireResource is a SkillResource.
type wireResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   *int64 `json:"size"`
}

// catalog is one listing, as the file system serves it.
type catalog struct {
	skills  map[string]*skillEntry // by folder
	dirs    []string               // sorted
	mod     time.Time              // of the root folder
	skipped []Skipped
	bytes   int64 // of JSON listed
}

// skillEntry is one listed skill.
type skillEntry struct {
	uri     string
	path    string // the skill path: segments joined by "/"
	dir     string // its folder: the last segment
	front   map[string]any
	dynamic bool
	files   map[string]*fileEntry    // by path in the folder
	tree    map[string][]fs.DirEntry // each folder's entries, sorted; "." is the skill folder
	mod     time.Time
	// pin holds a dynamic SKILL.md's size and digest once first read.
	pin struct {
		sync.Mutex
		set  bool
		size int64
		sum  [sha256.Size]byte
	}
}

// fileEntry is one listed file.
type fileEntry struct {
	rel  string
	uri  string
	size int64 // -1 when dynamic
	sum  [sha256.Size]byte
	mod  time.Time
}

// public is the entry as Skills reports it.
func (e *skillEntry) public() Skill {
	s := Skill{URI: e.uri, Dir: e.dir, Dynamic: e.dynamic}
	s.Name, _ = e.front["name"].(string)
	s.Description, _ = e.front["description"].(string)
	for _, f := range e.files {
		pf := File{Path: f.rel, URI: f.uri, Size: f.size}
		if !e.dynamic {
			pf.Digest = "sha256:" + hex.EncodeToString(f.sum[:])
		}
		s.Files = append(s.Files, pf)
	}
	slices.SortFunc(s.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return s
}

// list fetches every page of skills/list, within the bounds, and builds
// the catalog.
func (r *Remote) list(ctx context.Context) (*catalog, error) {
	var raws []json.RawMessage
	var total int64
	cursors := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		if page > r.opts.MaxPages {
			return nil, r.errorf("skills/list has more than %d pages; raise Options.MaxPages if the server is trusted: %w", r.opts.MaxPages, ErrLimit)
		}
		res, err := sdk.CallCustomMethod[*listParams, *listResult](ctx, r.cs, methodList, &listParams{Cursor: cursor})
		if err != nil {
			return nil, r.errorf("skills/list (page %d): %w", page, r.red.scrub(err))
		}
		if res.ResultType != "" && res.ResultType != "complete" {
			return nil, r.errorf("skills/list (page %d) answered with resultType %q; skillkit takes only complete results", page, clip(res.ResultType))
		}
		total += int64(res.size)
		if total > r.opts.MaxListBytes {
			return nil, r.errorf("skills/list is over %d bytes (at page %d); raise Options.MaxListBytes if the server is trusted: %w", r.opts.MaxListBytes, page, ErrLimit)
		}
		raws = append(raws, res.Skills...)
		if res.NextCursor == "" {
			break
		}
		if cursors[res.NextCursor] {
			return nil, r.errorf("skills/list (page %d) returned a cursor it had returned before; the listing loops", page)
		}
		cursors[res.NextCursor] = true
		cursor = res.NextCursor
	}
	cat, err := r.build(raws)
	if err != nil {
		return nil, err
	}
	cat.bytes = total
	return cat, nil
}

// build makes the catalog of a listing's entries.
func (r *Remote) build(raws []json.RawMessage) (*catalog, error) {
	cat := &catalog{skills: map[string]*skillEntry{}}
	byURI := map[string]bool{}
	root := sha256.New()
	for i, raw := range raws {
		e, uri, err := r.entry(raw)
		if err != nil {
			cat.skipped = append(cat.skipped, Skipped{URI: uri, Reason: err.Error()})
			continue
		}
		if byURI[e.uri] {
			return nil, r.errorf("skills/list lists %q twice (entry %d)", e.uri, i+1)
		}
		byURI[e.uri] = true
		if other, ok := cat.skills[e.dir]; ok {
			return nil, r.errorf("skills %q and %q would share the folder %q (skillkit serves a skill under the last segment of its path); the server must give them distinct names", other.uri, e.uri, e.dir)
		}
		cat.skills[e.dir] = e
		cat.dirs = append(cat.dirs, e.dir)
	}
	slices.Sort(cat.dirs)
	for _, d := range cat.dirs {
		root.Write([]byte(cat.skills[d].uri))
		m := cat.skills[d].mod.Unix()
		root.Write(binary.BigEndian.AppendUint64(nil, uint64(m)))
	}
	cat.mod = modTime(root.Sum(nil))
	return cat, nil
}

// entry checks one listed skill and builds its entry; uri is the
// entry's uri as far as it could be read, for Skipped.
func (r *Remote) entry(raw json.RawMessage) (*skillEntry, string, error) {
	var w wireSkill
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, "", fmt.Errorf("entry is not a Skill object: %v", err)
	}
	segs, err := parseSkillURI(w.URI)
	if err != nil {
		return nil, w.URI, err
	}
	e := &skillEntry{uri: w.URI, path: strings.Join(segs, "/"), dir: segs[len(segs)-1], files: map[string]*fileEntry{}}
	fail := func(format string, args ...any) (*skillEntry, string, error) {
		return nil, w.URI, fmt.Errorf("skill %q: "+format, append([]any{w.URI}, args...)...)
	}
	if err := decodeObject(w.Frontmatter, &e.front); err != nil {
		return fail("frontmatter is not a JSON object: %v", err)
	}
	if name, _ := e.front["name"].(string); name != e.dir {
		return fail("frontmatter name %q is not the last segment of the skill path (%q), as the extension requires", clip(name), e.dir)
	}
	h := sha256.New()
	h.Write([]byte(w.URI))
	var dynamic string
	if json.Unmarshal(w.Resources, &dynamic) == nil {
		if dynamic != "dynamic" {
			return fail("resources is %q; expected a list of resources or \"dynamic\"", clip(dynamic))
		}
		e.dynamic = true
		h.Write([]byte("\x00dynamic"))
		e.files[skill.FileName] = &fileEntry{rel: skill.FileName, uri: w.URI, size: -1, mod: modTime(h.Sum(nil))}
	} else {
		var res []wireResource
		if err := json.Unmarshal(w.Resources, &res); err != nil {
			return fail("resources is neither a list of resources nor \"dynamic\": %v", err)
		}
		if len(res) > r.opts.MaxFiles {
			return fail("lists %d files, over the %d-file limit (Options.MaxFiles)", len(res), r.opts.MaxFiles)
		}
		var bytes int64
		for _, x := range res {
			f, err := resource(e.path, x)
			if err != nil {
				return fail("%v", err)
			}
			if _, dup := e.files[f.rel]; dup {
				return fail("lists %q twice", x.URI)
			}
			if bytes += f.size; bytes > r.opts.MaxBytes {
				return fail("lists over %d bytes of files, the per-skill limit (Options.MaxBytes)", r.opts.MaxBytes)
			}
			e.files[f.rel] = f
			h.Write([]byte(f.uri + "\x00" + hex.EncodeToString(f.sum[:]) + "\x00"))
			h.Write(binary.BigEndian.AppendUint64(nil, uint64(f.size)))
		}
		if _, ok := e.files[skill.FileName]; !ok {
			return fail("its resources do not include %s itself", w.URI)
		}
	}
	e.mod = modTime(h.Sum(nil))
	if err := e.buildTree(); err != nil {
		return fail("%v", err)
	}
	return e, w.URI, nil
}

// resource checks one listed resource of the skill at skillPath.
func resource(skillPath string, x wireResource) (*fileEntry, error) {
	rel, err := resourcePath(skillPath, x.URI)
	if err != nil {
		return nil, err
	}
	if x.Size == nil || *x.Size < 0 {
		return nil, fmt.Errorf("resource %q has no size or a negative one", x.URI)
	}
	hexSum, ok := strings.CutPrefix(x.Digest, "sha256:")
	sum, err := hex.DecodeString(hexSum)
	if !ok || err != nil || len(sum) != sha256.Size || strings.ToLower(hexSum) != hexSum {
		return nil, fmt.Errorf("resource %q has digest %q; expected \"sha256:\" and 64 lower-case hex digits", x.URI, clip(x.Digest))
	}
	f := &fileEntry{rel: rel, uri: x.URI, size: *x.Size, mod: modTime(sum)}
	copy(f.sum[:], sum)
	return f, nil
}

// buildTree makes the folders the listed paths imply.
func (e *skillEntry) buildTree() error {
	e.tree = map[string][]fs.DirEntry{".": nil}
	for _, f := range e.files {
		if _, ok := e.tree[f.rel]; ok {
			return fmt.Errorf("%q is listed as a file and implied as a folder", f.rel)
		}
		child := fs.DirEntry(&node{name: path.Base(f.rel), e: e, f: f})
		for dir := path.Dir(f.rel); ; dir = path.Dir(dir) {
			if _, ok := e.files[dir]; ok {
				return fmt.Errorf("%q is listed as a file and implied as a folder", dir)
			}
			_, known := e.tree[dir]
			e.tree[dir] = append(e.tree[dir], child)
			if known || dir == "." {
				break
			}
			child = &node{name: path.Base(dir), e: e, dir: true}
		}
	}
	for _, entries := range e.tree {
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	return nil
}

// decodeObject decodes a JSON object into *m, its values as
// encoding/json decodes them into any.
func decodeObject(raw json.RawMessage, m *map[string]any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return fmt.Errorf("missing")
	}
	if err := json.Unmarshal(raw, m); err != nil {
		return err
	}
	if *m == nil {
		return fmt.Errorf("null")
	}
	return nil
}

// modTime derives a modification time from a digest: a fixed, past time
// (between 2000 and 2009) that changes when the digest does. It is no
// time at all, but what a refresh needs: equal for equal content, other
// for other content, and never recent enough to look racy.
func modTime(sum []byte) time.Time {
	secs := binary.BigEndian.Uint32(sum[:4]) >> 4
	nanos := binary.BigEndian.Uint32(sum[4:8]) % 1e9
	return time.Unix(946684800+int64(secs), int64(nanos)).UTC()
}

// parseHTTP parses an http or https URL with a host.
func parseHTTP(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("not an http(s) URL")
	}
	return u, nil
}

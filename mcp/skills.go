package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gabriel-vasile/mimetype"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/internal/termtext"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
)

// The skills extension (SEP-2640) as this file serves it.
const (
	// extensionName is the key of the extension in
	// capabilities.extensions.
	extensionName = "io.modelcontextprotocol/skills"

	methodSkillsList   = "skills/list"
	methodSkillsGet    = "skills/get"
	methodDirRead      = "resources/directory/read"
	methodResourceList = "resources/list"

	// maxSkillFiles and maxSkillBytes are the extension's per-skill
	// limits: the entries of a skill's resources array, SKILL.md
	// included, and the sum of their sizes. A skill over either is not
	// served (hosts need not accept it).
	maxSkillFiles = 512
	maxSkillBytes = 16 << 20

	// defaultSkillsPageSize is the skills/list and
	// resources/directory/read page size when skillsConfig leaves it 0.
	defaultSkillsPageSize = 100
	// defaultSkillsTTL is the ttlMs hint when skillsConfig leaves it 0.
	defaultSkillsTTL = 60 * time.Second

	resultComplete = "complete"
	dirMIME        = "inode/directory"
	markdownMIME   = "text/markdown"
	binaryMIME     = "application/octet-stream"
)

// capabilities declares the skills extension, with resources/directory/read,
// and the resources capability it depends on (with list_changed, which
// Changed sends), in caps.
func capabilities(caps *sdk.ServerCapabilities) {
	caps.AddExtension(extensionName, map[string]any{"directoryRead": true})
	if caps.Resources == nil {
		caps.Resources = &sdk.ResourceCapabilities{}
	}
	caps.Resources.ListChanged = true
}

// skillsConfig configures addSkills.
type skillsConfig struct {
	// Snapshot returns the skills one request sees (a registry snapshot,
	// or a View of it for the request's context). It must not return nil.
	Snapshot func(ctx context.Context) *registry.Snapshot
	// PageSize is the number of entries of a skills/list or
	// resources/directory/read page; 0 means defaultSkillsPageSize.
	PageSize int
	// TTL is the ttlMs hint of skills/list and skills/get results; 0
	// means defaultSkillsTTL. resources/read results carry ttlMs 0.
	TTL time.Duration
	// Private marks results as cacheScope "private" (for one user only),
	// for a Snapshot that depends on who asks; the default is "public".
	Private bool
	// Renew returns a snapshot (as Snapshot does: for the request's
	// context) newer than stale, whose reads found a skill changed on
	// disk; nil: such a request fails with an error that says so.
	Renew func(ctx context.Context, stale *registry.Snapshot) (*registry.Snapshot, error)

	// maxFiles and maxBytes replace the extension's limits (0: 512 files,
	// 16 MiB) so tests can reach them with small skills.
	maxFiles int
	maxBytes int64
}

// limits are the per-skill limits a skills server withholds skills over.
type limits struct {
	files int
	bytes int64
}

// skillsServer serves the skills of a snapshot through one SDK server: the
// skill:// resources, skills/list, skills/get and resources/directory/read.
type skillsServer struct {
	srv *sdk.Server
	cfg skillsConfig
	lim limits

	mu sync.Mutex // serializes Changed
	// listed holds the URIs of the SKILL.md resources added to srv.
	listed map[string]bool
}

// addSkills registers the skills extension on srv: the two skill://
// resource templates and their read handler, one SKILL.md resource per
// skill (what resources/list shows, less the skills a request does not see
// or that are withheld), and the methods skills/list, skills/get and
// resources/directory/read. Declare the extension with capabilities in the
// ServerOptions srv was made with. A negative PageSize or TTL, or a nil
// Snapshot, is a programming error and panics.
func addSkills(srv *sdk.Server, cfg skillsConfig) *skillsServer {
	if cfg.Snapshot == nil {
		panic("mcp: addSkills: skillsConfig.Snapshot is nil")
	}
	if cfg.PageSize < 0 || cfg.TTL < 0 || cfg.maxFiles < 0 || cfg.maxBytes < 0 {
		panic(fmt.Sprintf("mcp: addSkills: negative skillsConfig value (PageSize %d, TTL %v)", cfg.PageSize, cfg.TTL))
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = defaultSkillsPageSize
	}
	if cfg.TTL == 0 {
		cfg.TTL = defaultSkillsTTL
	}
	s := &skillsServer{srv: srv, cfg: cfg, lim: limits{files: cfg.maxFiles, bytes: cfg.maxBytes}}
	if s.lim.files == 0 {
		s.lim.files = maxSkillFiles
	}
	if s.lim.bytes == 0 {
		s.lim.bytes = maxSkillBytes
	}
	srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "skill",
		Title:       "A skill's instructions",
		Description: "The SKILL.md of a skill: YAML front matter and Markdown instructions. skills/list lists the skills with every file's digest.",
		URITemplate: uriScheme + "{name}/" + skill.FileName,
		MIMEType:    markdownMIME,
	}, s.readResource)
	srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "skill-file",
		Title:       "A file of a skill",
		Description: "A script, reference or asset of a skill, by its path in the skill's folder.",
		URITemplate: uriScheme + "{name}/{+path}",
	}, s.readResource)
	must(sdk.AddReceivingCustomMethod(srv, methodSkillsList, s.list))
	must(sdk.AddReceivingCustomMethod(srv, methodSkillsGet, s.get))
	must(sdk.AddReceivingCustomMethod(srv, methodDirRead, s.readDir))
	srv.AddReceivingMiddleware(s.filterResourceList)
	s.sync(context.Background())
	return s
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// Changed publishes the snapshot cfg.Snapshot now returns: it brings the
// SKILL.md resources in line with it, which makes the SDK send
// notifications/resources/list_changed to every session (to a 2026-07-28
// session through its subscriptions/listen stream). Call it after a
// registry refresh produced a new snapshot.
func (s *skillsServer) Changed(ctx context.Context) {
	s.sync(ctx)
}

// sync adds a SKILL.md resource for every skill of the current snapshot
// whose name a skill:// URI can carry and removes the others. Adding a
// resource again replaces it and, like removing one, schedules the SDK's
// list_changed notification; with no session there is nothing to notify.
func (s *skillsServer) sync(ctx context.Context) {
	snap := s.cfg.Snapshot(ctx)
	if snap == nil {
		return
	}
	sums := snap.Summaries()
	s.mu.Lock()
	defer s.mu.Unlock()
	want := make(map[string]bool, len(sums))
	var add []*sdk.Resource
	for _, sm := range sums {
		if !skill.ValidName(sm.Name) {
			continue // withheld: see nameReason
		}
		uri := skillMDURI(sm.Name)
		want[uri] = true
		// The description as a host shows it in a list: control characters
		// and bidi overrides escaped (skills/list keeps the front matter
		// verbatim, as the extension says).
		r := &sdk.Resource{URI: uri, Name: sm.Name, MIMEType: markdownMIME, Description: termtext.Escape(sm.Description)}
		add = append(add, r)
	}
	var gone []string
	for uri := range s.listed {
		if !want[uri] {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.srv.RemoveResources(gone...)
	}
	for _, r := range add {
		s.srv.AddResource(r, s.readResource)
	}
	s.listed = want
}

// snapshot is the snapshot of one request.
func (s *skillsServer) snapshot(ctx context.Context) (*registry.Snapshot, error) {
	snap := s.cfg.Snapshot(ctx)
	if snap == nil {
		return nil, internalError(errors.New("no skills snapshot"))
	}
	return snap, nil
}

// cacheable is the ttlMs and cacheScope of the results that carry them.
func (s *skillsServer) cacheable() sdk.Cacheable {
	scope := "public"
	if s.cfg.Private {
		scope = "private"
	}
	return sdk.Cacheable{TTLMs: int(s.cfg.TTL.Milliseconds()), CacheScope: scope}
}

// filterResourceList is a receiving middleware that drops, from a
// resources/list page, the SKILL.md resources of skills the request's
// snapshot does not serve (hidden by a filter, gone, or withheld). The
// page may come out shorter than the SDK's page size; pagination allows it.
func (s *skillsServer) filterResourceList(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != methodResourceList {
			return res, err
		}
		lr, ok := res.(*sdk.ListResourcesResult)
		if !ok || lr == nil {
			return res, err
		}
		snap, err := s.snapshot(ctx)
		if err != nil {
			return nil, err
		}
		kept := make([]*sdk.Resource, 0, len(lr.Resources))
		for _, r := range lr.Resources {
			if u, perr := parseURI(r.URI); perr == nil {
				if _, why, err := s.served(ctx, snap, u.Name); err != nil && !errors.Is(err, registry.ErrStale) || why != "" {
					// (A skill changing on disk stays listed: it is there.)
					if ctx.Err() != nil {
						return nil, internalError(ctx.Err())
					}
					continue
				}
			}
			kept = append(kept, r)
		}
		lr.Resources = kept
		return lr, nil
	}
}

// Wire types of the extension's methods. Results set resultType themselves:
// the SDK adds it to its own results only.
type (
	// listSkillsParams are the params of skills/list.
	listSkillsParams struct {
		sdk.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	// listSkillsResult is the result of skills/list.
	listSkillsResult struct {
		sdk.ResultBase
		ResultType string        `json:"resultType"`
		Skills     []*skillEntry `json:"skills"`
		NextCursor string        `json:"nextCursor,omitempty"`
		sdk.Cacheable
	}
	// getSkillParams are the params of skills/get.
	getSkillParams struct {
		sdk.ParamsBase
		URI string `json:"uri"`
	}
	// getSkillResult is the result of skills/get.
	getSkillResult struct {
		sdk.ResultBase
		ResultType string      `json:"resultType"`
		Skill      *skillEntry `json:"skill"`
		sdk.Cacheable
	}
	// readDirParams are the params of resources/directory/read.
	readDirParams struct {
		sdk.ParamsBase
		URI    string `json:"uri"`
		Cursor string `json:"cursor,omitempty"`
	}
	// readDirResult is the result of resources/directory/read. The spec
	// types it a PaginatedResult; it carries ttlMs and cacheScope as
	// resources/list does, because the reference client (TypeScript SDK
	// v2.4.0, SkillsClient.readDirectory) refuses a result without them.
	readDirResult struct {
		sdk.ResultBase
		ResultType string          `json:"resultType"`
		Resources  []*sdk.Resource `json:"resources"`
		NextCursor string          `json:"nextCursor,omitempty"`
		sdk.Cacheable
	}
	// skillEntry is the extension's Skill: the SKILL.md URI, the front
	// matter verbatim and the complete manifest.
	skillEntry struct {
		URI         string          `json:"uri"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Resources   []skillResource `json:"resources"`
	}
	// skillResource is one file of a skillEntry.
	skillResource struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
	}
)

// list answers skills/list: the served skills in name order, PageSize at
// a time, each entry whole. The cursor is the last name of the previous
// page, so a page follows on after a refresh too. A skill whose files
// cannot be read now is left out of the page (a listing may be partial);
// skills/get reports its error.
func (s *skillsServer) list(ctx context.Context, _ *sdk.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
	var after string
	if p != nil && p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		if err != nil || len(b) == 0 {
			return nil, invalidParams("skills/list: cursor %q is not one this server gave; start again without a cursor", p.Cursor)
		}
		after = string(b)
	}
	return retryStale(ctx, s, func(snap *registry.Snapshot) (*listSkillsResult, error) {
		sums := snap.Summaries()
		i := sort.Search(len(sums), func(i int) bool { return sums[i].Name > after })
		res := &listSkillsResult{ResultType: resultComplete, Skills: []*skillEntry{}, Cacheable: s.cacheable()}
		last := ""
		for ; i < len(sums); i++ {
			if len(res.Skills) == s.cfg.PageSize {
				res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(last))
				break
			}
			name := sums[i].Name
			e, why, err := s.entry(ctx, snap, name)
			if err != nil && ctx.Err() != nil {
				return nil, internalError(ctx.Err())
			}
			if errors.Is(err, registry.ErrStale) {
				return nil, err // listed again on a renewed snapshot
			}
			if err != nil || why != "" {
				continue
			}
			res.Skills = append(res.Skills, e)
			last = name
		}
		return res, nil
	})
}

// get answers skills/get for the SKILL.md URI of a served skill, listed or
// not.
func (s *skillsServer) get(ctx context.Context, _ *sdk.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("skills/get: params.uri is required: the skill:// URI of a skill's SKILL.md")
	}
	u, err := parseURI(p.URI)
	if err != nil {
		return nil, invalidParamsURI(p.URI, "No skill is served at %s: %v", p.URI, err)
	}
	if u.Path != skill.FileName {
		return nil, invalidParamsURI(p.URI, "%s is not the URI of a skill's SKILL.md; use %s", p.URI, skillMDURI(u.Name))
	}
	return retryStale(ctx, s, func(snap *registry.Snapshot) (*getSkillResult, error) {
		e, why, err := s.entry(ctx, snap, u.Name)
		if err != nil {
			return nil, s.readErrStale(p.URI, err)
		}
		if why != "" {
			return nil, invalidParamsURI(p.URI, "No skill is served at %s: %s", p.URI, why)
		}
		return &getSkillResult{ResultType: resultComplete, Skill: e, Cacheable: s.cacheable()}, nil
	})
}

// readDir answers resources/directory/read: the direct children of the
// skill's folder (skill://name) or of one of its folders, as its manifest
// implies them — files with their MIME type and size, folders as
// inode/directory — in name order, PageSize at a time.
func (s *skillsServer) readDir(ctx context.Context, _ *sdk.ServerSession, p *readDirParams) (*readDirResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("resources/directory/read: params.uri is required: the skill:// URI of a skill or one of its folders")
	}
	u, err := parseURI(p.URI)
	if err != nil {
		return nil, invalidParamsURI(p.URI, "%s is not a directory resource of this server: %v", p.URI, err)
	}
	var after string
	if p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		if err != nil || len(b) == 0 {
			return nil, invalidParams("resources/directory/read: cursor %q is not one this server gave; start again without a cursor", p.Cursor)
		}
		after = string(b)
	}
	return retryStale(ctx, s, func(snap *registry.Snapshot) (*readDirResult, error) {
		sv, why, err := s.served(ctx, snap, u.Name)
		if err != nil {
			return nil, s.readErrStale(p.URI, err)
		}
		if why != "" {
			return nil, invalidParamsURI(p.URI, "No skill is served at %s: %s", p.URI, why)
		}
		kids, isDir := children(sv.manifest, u.Path)
		if !isDir {
			if _, ok := sv.manifest.Lookup(u.Path); ok {
				return nil, invalidParamsURI(p.URI, "%s is not a directory resource; read it with resources/read", p.URI)
			}
			return nil, invalidParamsURI(p.URI, "%s does not exist", p.URI)
		}
		i := sort.Search(len(kids), func(i int) bool { return kids[i].name > after })
		res := &readDirResult{ResultType: resultComplete, Resources: []*sdk.Resource{}, Cacheable: s.cacheable()}
		for ; i < len(kids); i++ {
			if len(res.Resources) == s.cfg.PageSize {
				res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(kids[i-1].name))
				break
			}
			k := kids[i]
			rel := path.Join(u.Path, k.name)
			r := &sdk.Resource{URI: fileURI(u.Name, rel), Name: k.name}
			if k.dir {
				r.MIMEType = dirMIME
			} else {
				r.Size = k.size
				r.MIMEType, err = s.fileMIME(ctx, snap, u.Name, rel)
				if err != nil {
					return nil, s.readErrStale(r.URI, err)
				}
			}
			res.Resources = append(res.Resources, r)
		}
		return res, nil
	})
}

// child is one direct child of a folder of a skill.
type child struct {
	name string
	dir  bool
	size int64
}

// children returns the direct children of the folder dir ("" for the skill
// folder) that m's files imply, sorted by name, and whether dir is a folder
// at all.
func children(m *skill.Manifest, dir string) ([]child, bool) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	var kids []child
	seen := map[string]bool{}
	for _, f := range m.Files {
		rest, ok := strings.CutPrefix(f.Path, prefix)
		if !ok {
			continue
		}
		name, _, nested := strings.Cut(rest, "/")
		if seen[name] {
			continue
		}
		seen[name] = true
		kids = append(kids, child{name: name, dir: nested, size: f.Size})
	}
	slices.SortFunc(kids, func(a, b child) int { return strings.Compare(a.name, b.name) })
	return kids, dir == "" || len(kids) > 0
}

// readResource reads one listed file of a served skill for resources/read:
// SKILL.md as text/markdown, other files with the MIME type of their
// extension or content, as text when they are textual and valid UTF-8 and
// as a blob otherwise. The bytes are the ones the snapshot's digests
// describe (registry.Snapshot.Files checks them against the pinned
// digest).
func (s *skillsServer) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	raw := req.Params.URI
	u, err := parseURI(raw)
	if err != nil {
		return nil, invalidParamsURI(raw, "Resource not found: %v", err)
	}
	if u.Path == "" {
		return nil, invalidParamsURI(raw, "%s is a directory resource; list it with resources/directory/read", raw)
	}
	return retryStale(ctx, s, func(snap *registry.Snapshot) (*sdk.ReadResourceResult, error) {
		sv, why, err := s.served(ctx, snap, u.Name)
		if err != nil {
			return nil, s.readErrStale(raw, err)
		}
		if why != "" {
			return nil, invalidParamsURI(raw, "Resource not found: no skill is served at %s: %s", skillMDURI(u.Name), why)
		}
		if _, ok := sv.manifest.Lookup(u.Path); !ok {
			if _, isDir := children(sv.manifest, u.Path); isDir {
				return nil, invalidParamsURI(raw, "%s is a directory resource; list it with resources/directory/read", raw)
			}
			return nil, sdk.ResourceNotFoundError(raw)
		}
		fsys, err := snap.Files(ctx, u.Name)
		if err != nil {
			return nil, s.readErrStale(raw, err)
		}
		data, err := fs.ReadFile(fsys, u.Path)
		if err != nil {
			return nil, s.readErrStale(raw, err)
		}
		mime, text := contentType(u.Path, data)
		c := &sdk.ResourceContents{URI: raw, MIMEType: mime}
		switch {
		case len(data) == 0:
			// The SDK leaves out an empty text; an empty blob stays on the
			// wire, so the contents keep a text or a blob as the schema asks.
			c.Blob = []byte{}
		case text:
			c.Text = string(data)
		default:
			c.Blob = data
		}
		// ttlMs 0: a client re-reads rather than keep bytes a refresh may
		// have replaced; hosts cache files by the digests of the entry instead.
		rc := s.cacheable()
		rc.TTLMs = 0
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}, Cacheable: rc}, nil
	})
}

// retryStale runs fn on the request's snapshot and, while its error wraps
// registry.ErrStale (a skill changed on disk since the snapshot was
// taken), on renewed ones (registry.Retry); a skill that keeps changing
// is an error that says so.
func retryStale[T any](ctx context.Context, s *skillsServer, fn func(*registry.Snapshot) (T, error)) (T, error) {
	snap, err := s.snapshot(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := registry.Retry(ctx, snap, s.cfg.Renew, fn)
	switch {
	case !errors.Is(err, registry.ErrStale):
		return v, err
	case ctx.Err() != nil:
		return v, internalError(ctx.Err())
	}
	return v, internalError(errors.New("the skill is changing on disk (being edited or replaced); try again in a moment"))
}

// readErrStale is readError, except that an error wrapping
// registry.ErrStale is returned as it is, for retryStale.
func (s *skillsServer) readErrStale(uri string, err error) error {
	if errors.Is(err, registry.ErrStale) {
		return err
	}
	return s.readError(uri, err)
}

// errNoSkill is the error of served for a name the snapshot does not hold.
var errNoSkill = errors.New("no such skill")

// readError turns the failure of a read for uri into a JSON-RPC error:
// a skill or file that is not there is -32602, anything else -32603. Host
// paths stay out of the message.
func (s *skillsServer) readError(uri string, err error) error {
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we):
		return err
	case errors.Is(err, errNoSkill), errors.Is(err, registry.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return invalidParamsURI(uri, "Resource not found: nothing is served at %s", uri)
	case errors.Is(err, registry.ErrStale):
		return internalError(fmt.Errorf("reading %s: the skill changed on disk; list it again after the server refreshes", uri))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return internalError(fmt.Errorf("reading %s: %w", uri, err))
	}
	return internalError(fmt.Errorf("reading %s failed on the server", uri))
}

// servedSkill is a skill the extension serves: its front matter and its
// file listing, within the limits.
type servedSkill struct {
	name        string
	frontmatter json.RawMessage
	manifest    *skill.Manifest
}

// servedKey and entryKey key the per-snapshot memos of served and entry.
type (
	servedKey struct {
		name string
		lim  limits
	}
	entryKey struct {
		name string
		lim  limits
	}
	mimeKey struct{ name, rel string }
)

// servedResult is what served memoizes: the skill, or why it is withheld.
type servedResult struct {
	skill *servedSkill
	why   string
}

// served returns the named skill as the extension serves it, or the reason
// it is withheld (a name no URI can end in, front matter that cannot be
// published verbatim, or files over the limits), or an error: errNoSkill
// for a name the snapshot does not hold, the listing's error otherwise.
// It lists the skill's files (once per snapshot) and reads none.
func (s *skillsServer) served(ctx context.Context, snap *registry.Snapshot, name string) (*servedSkill, string, error) {
	return s.lim.served(ctx, snap, name)
}

func (lim limits) served(ctx context.Context, snap *registry.Snapshot, name string) (*servedSkill, string, error) {
	if _, ok := snap.Lookup(name); !ok {
		return nil, "", errNoSkill
	}
	v, err := snap.Memo(servedKey{name, lim}, func() (any, error) {
		sv, why, err := lim.check(ctx, snap, name)
		return servedResult{sv, why}, err
	})
	if err != nil {
		return nil, "", err
	}
	r := v.(servedResult)
	return r.skill, r.why, nil
}

// check is served without the memo.
func (lim limits) check(ctx context.Context, snap *registry.Snapshot, name string) (*servedSkill, string, error) {
	if !skill.ValidName(name) || utf8.RuneCountInString(name) > skill.MaxNameLength {
		return nil, fmt.Sprintf("its name is not a valid skill name (1 to %d lower-case letters, digits and single hyphens), which a skill:// URI must end in", skill.MaxNameLength), nil
	}
	fm, ok := snap.Frontmatter(name)
	if !ok {
		return nil, "", errNoSkill
	}
	fmJSON, why := frontmatterJSON(name, fm)
	if why != "" {
		return nil, why, nil
	}
	m, _, err := snap.Manifest(ctx, name)
	if err != nil {
		return nil, "", err
	}
	if why := lim.reason(m); why != "" {
		return nil, why, nil
	}
	return &servedSkill{name: name, frontmatter: fmJSON, manifest: m}, "", nil
}

// reason says why a skill with manifest m is withheld, or returns "".
func (lim limits) reason(m *skill.Manifest) string {
	if t := m.Truncated; t != nil {
		atLeast := ""
		if t.Partial {
			atLeast = "at least "
		}
		switch {
		case t.Files > lim.files:
			return fmt.Sprintf("it has %s%d files, over the skills extension's limit of %d per skill", atLeast, t.Files, lim.files)
		case t.Bytes > lim.bytes:
			return fmt.Sprintf("it holds %s%d bytes, over the skills extension's limit of %d (%s) per skill", atLeast, t.Bytes, lim.bytes, sizeText(lim.bytes))
		}
		return fmt.Sprintf("its file listing stopped at the registry's %s limit of %d, so no complete manifest can be published; raise that limit", t.Limit, t.Max)
	}
	if n := len(m.Files); n > lim.files {
		return fmt.Sprintf("it has %d files, over the skills extension's limit of %d per skill", n, lim.files)
	}
	if m.Bytes > lim.bytes {
		return fmt.Sprintf("it holds %d bytes, over the skills extension's limit of %d (%s) per skill", m.Bytes, lim.bytes, sizeText(lim.bytes))
	}
	for _, f := range m.Files {
		if clean, err := registry.CleanPath(f.Path); err != nil || clean != f.Path {
			return fmt.Sprintf("its file %q has a name no skill:// URI can carry", f.Path)
		}
	}
	return ""
}

// sizeText renders a byte count the way the limits are stated.
func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// frontmatterJSON renders fm as the JSON object of a skill entry: every
// field of the SKILL.md header, in the file's order, with the values YAML
// decoded them to. It returns instead why that cannot be done verbatim: a
// field the parser had to leave out, or a name or description that is not
// the text the skill is served by.
func frontmatterJSON(name string, fm *skill.Frontmatter) (json.RawMessage, string) {
	if n, ok := fm.Raw[skill.FieldName].(string); !ok || n != name {
		return nil, fmt.Sprintf("its SKILL.md front matter has no name field equal to %q, which the skill:// URI ends in", name)
	}
	if d, ok := fm.Raw[skill.FieldDescription].(string); !ok || d == "" {
		return nil, "its SKILL.md front matter has no description text"
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range fm.Keys {
		v, ok := fm.Raw[k]
		if !ok {
			return nil, fmt.Sprintf("its front-matter field %q could not be read, so the front matter cannot be published verbatim", k)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := encodeJSON(&buf, k); err != nil {
			return nil, fmt.Sprintf("its front-matter field %q cannot be written as JSON: %v", k, err)
		}
		buf.WriteByte(':')
		if err := encodeJSON(&buf, v); err != nil {
			return nil, fmt.Sprintf("its front-matter field %q cannot be written as JSON: %v", k, err)
		}
	}
	buf.WriteByte('}')
	return json.RawMessage(buf.Bytes()), ""
}

// encodeJSON appends v as JSON, without HTML escaping or a newline.
func encodeJSON(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // the newline Encode adds
	return nil
}

// entryResult is what entry memoizes.
type entryResult struct {
	entry *skillEntry
	why   string
}

// entry returns the skill entry of a served skill (its digests computed
// once per snapshot, registry.Snapshot.Digests), or why it is withheld.
func (s *skillsServer) entry(ctx context.Context, snap *registry.Snapshot, name string) (*skillEntry, string, error) {
	sv, why, err := s.served(ctx, snap, name)
	if err != nil || why != "" {
		return nil, why, err
	}
	v, err := snap.Memo(entryKey{name, s.lim}, func() (any, error) {
		dm, err := snap.Digests(ctx, name)
		if err != nil {
			return nil, err
		}
		if why := s.lim.reason(dm); why != "" {
			return entryResult{why: why}, nil
		}
		e := &skillEntry{
			URI:         skillMDURI(name),
			Frontmatter: sv.frontmatter,
			Resources:   make([]skillResource, 0, len(dm.Files)),
		}
		for _, f := range dm.Files {
			e.Resources = append(e.Resources, skillResource{
				URI:    fileURI(name, f.Path),
				Digest: "sha256:" + f.SHA256,
				Size:   f.Size,
			})
		}
		return entryResult{entry: e}, nil
	})
	if err != nil {
		return nil, "", err
	}
	r := v.(entryResult)
	return r.entry, r.why, nil
}

// withheld returns one line for each skill of snap the skills extension
// does not serve, naming it and saying why: over 512 files or 16 MiB, a
// listing cut short by the registry's limits, a name or front matter a
// skill entry cannot carry, or files that could not be listed. It lists
// every skill's files (ListAll) and reads none.
func withheld(ctx context.Context, snap *registry.Snapshot) []string {
	return limits{files: maxSkillFiles, bytes: maxSkillBytes}.withheld(ctx, snap)
}

func (lim limits) withheld(ctx context.Context, snap *registry.Snapshot) []string {
	if snap == nil {
		return nil
	}
	var lines []string
	if err := snap.ListAll(ctx); err != nil {
		return append(lines, fmt.Sprintf("the skills served over MCP were not all checked: %v", err))
	}
	for _, sm := range snap.Summaries() {
		_, why, err := lim.served(ctx, snap, sm.Name)
		switch {
		case err != nil && ctx.Err() != nil:
			return append(lines, fmt.Sprintf("the skills served over MCP were not all checked: %v", ctx.Err()))
		case err != nil:
			lines = append(lines, fmt.Sprintf("skill %q is not served over MCP: its files could not be listed: %v", sm.Name, err))
		case why != "":
			lines = append(lines, fmt.Sprintf("skill %q is not served over MCP: %s", sm.Name, why))
		}
	}
	return lines
}

// fileMIME is the MIME type of a listed file for a directory listing: by
// extension, or sniffed from its first bytes (memoized per snapshot), so it
// matches what resources/read reports.
func (s *skillsServer) fileMIME(ctx context.Context, snap *registry.Snapshot, name, rel string) (string, error) {
	if m, _, ok := extMIME(rel); ok {
		return m, nil
	}
	v, err := snap.Memo(mimeKey{name, rel}, func() (any, error) {
		fsys, err := snap.Files(ctx, name)
		if err != nil {
			return nil, err
		}
		f, err := fsys.Open(rel)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		head := make([]byte, sniffLen)
		n, err := io.ReadFull(f, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return nil, err
		}
		m, _ := sniffMIME(head[:n])
		return m, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// sniffLen is how much of a file sniffMIME looks at (mimetype's default).
const sniffLen = 3072

// contentType returns the MIME type of a file and whether it is sent as
// text: SKILL.md is text/markdown; other files take the type of their
// extension, else the sniffed one. Textual types go as text when the bytes
// are valid UTF-8.
func contentType(rel string, data []byte) (string, bool) {
	m, textual, ok := extMIME(rel)
	if !ok {
		m, textual = sniffMIME(data)
	}
	return m, textual && utf8.Valid(data)
}

// sniffMIME detects the MIME type of data (its first sniffLen bytes), without
// parameters, and whether it is a kind of text.
func sniffMIME(data []byte) (string, bool) {
	if len(data) > sniffLen {
		data = data[:sniffLen]
	}
	mt := mimetype.Detect(data)
	textual := false
	for m := mt; m != nil; m = m.Parent() {
		if m.Is("text/plain") {
			textual = true
			break
		}
	}
	base, _, _ := strings.Cut(mt.String(), ";")
	base = strings.TrimSpace(base)
	if base == "" {
		base = binaryMIME
	}
	return base, textual
}

// extMIME returns the MIME type of the file's extension when it is one a
// skill commonly holds, and whether it is textual. A fixed table, not the
// host's mime.types, so every machine serves the same types.
func extMIME(rel string) (mime string, textual, ok bool) {
	if rel == skill.FileName {
		return markdownMIME, true, true
	}
	t, ok := extTypes[strings.ToLower(path.Ext(rel))]
	return t.mime, t.text, ok
}

var extTypes = map[string]struct {
	mime string
	text bool
}{
	".md":       {markdownMIME, true},
	".markdown": {markdownMIME, true},
	".txt":      {"text/plain", true},
	".py":       {"text/x-python", true},
	".sh":       {"text/x-shellscript", true},
	".bash":     {"text/x-shellscript", true},
	".js":       {"text/javascript", true},
	".mjs":      {"text/javascript", true},
	".cjs":      {"text/javascript", true},
	".ts":       {"text/x-typescript", true},
	".go":       {"text/x-go", true},
	".rb":       {"text/x-ruby", true},
	".rs":       {"text/x-rust", true},
	".java":     {"text/x-java", true},
	".c":        {"text/x-c", true},
	".h":        {"text/x-c", true},
	".html":     {"text/html", true},
	".htm":      {"text/html", true},
	".css":      {"text/css", true},
	".csv":      {"text/csv", true},
	".tsv":      {"text/tab-separated-values", true},
	".json":     {"application/json", true},
	".yaml":     {"application/yaml", true},
	".yml":      {"application/yaml", true},
	".toml":     {"application/toml", true},
	".xml":      {"application/xml", true},
	".sql":      {"application/sql", true},
	".svg":      {"image/svg+xml", true},
	".png":      {"image/png", false},
	".jpg":      {"image/jpeg", false},
	".jpeg":     {"image/jpeg", false},
	".gif":      {"image/gif", false},
	".webp":     {"image/webp", false},
	".pdf":      {"application/pdf", false},
	".zip":      {"application/zip", false},
}

// invalidParams is a JSON-RPC -32602 error.
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// invalidParamsURI is a -32602 error carrying the URI in its data, as the
// SDK's ResourceNotFoundError does.
func invalidParamsURI(uri, format string, args ...any) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...), Data: data}
}

// internalError is a JSON-RPC -32603 error. (A plain Go error would reach
// the client with code 0.)
func internalError(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

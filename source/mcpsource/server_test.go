package mcpsource_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source/mcpsource"
)

// testSkill is one skill a test server serves.
type testSkill struct {
	path  string            // skill path: "acme/pdf"
	files map[string]string // by path in the skill folder
	// dynamic lists the resources as "dynamic".
	dynamic bool
}

// testServer is a real Go SDK server with the skills extension: it
// serves skills/list (paged), skills/get and every listed file as a
// resource, and counts the requests it receives by method and by URI.
type testServer struct {
	srv      *sdk.Server
	pageSize int                                 // 0: one page
	entries  []map[string]any                    // the listing, editable before use
	served   map[string][]byte                   // resource bytes by URI, editable
	loop     bool                                // every page's nextCursor is "again"
	extra    map[string][]byte                   // resources served but not listed
	hang     map[string]bool                     // methods or URIs that answer only when the request ends
	release  chan struct{}                       // closed when the test ends
	once     sync.Once                           // closes release
	answerAs map[string]string                   // a read of the key answers for the value's URI
	mu       sync.Mutex                          // guards counts, reads
	counts   map[string]int                      // by method
	reads    map[string]int                      // resources/read by URI
	edit     func(page int, res *testListResult) // changes a page before it is sent
}

type testListParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type testListResult struct {
	sdk.ResultBase
	sdk.Cacheable
	ResultType string           `json:"resultType"`
	Skills     []map[string]any `json:"skills"`
	NextCursor string           `json:"nextCursor,omitempty"`
}

type testGetParams struct {
	sdk.ParamsBase
	URI string `json:"uri"`
}

type testGetResult struct {
	sdk.ResultBase
	sdk.Cacheable
	ResultType string         `json:"resultType"`
	Skill      map[string]any `json:"skill"`
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// newTestServer builds the listing from skills: frontmatter is each
// SKILL.md's front matter as JSON, resources every file. extension
// false leaves the capability out.
func newTestServer(t testing.TB, extension bool, skills ...testSkill) *testServer {
	t.Helper()
	ts := &testServer{served: map[string][]byte{}, extra: map[string][]byte{}, answerAs: map[string]string{}, hang: map[string]bool{}, release: make(chan struct{}), counts: map[string]int{}, reads: map[string]int{}}
	for _, s := range skills {
		uri := "skill://" + s.path + "/SKILL.md"
		doc, _, err := skill.Parse([]byte(s.files["SKILL.md"]), skill.ParseOptions{})
		if err != nil {
			t.Fatalf("test skill %s: %v", s.path, err)
		}
		front := map[string]any{}
		b, err := json.Marshal(doc.Raw)
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(b, &front)
		entry := map[string]any{"uri": uri, "frontmatter": front}
		if s.dynamic {
			entry["resources"] = "dynamic"
		}
		var res []any
		for _, rel := range slices.Sorted(maps.Keys(s.files)) {
			data := []byte(s.files[rel])
			ruri := "skill://" + s.path + "/" + rel
			ts.served[ruri] = data
			res = append(res, map[string]any{"uri": ruri, "digest": digest(data), "size": len(data)})
		}
		if !s.dynamic {
			entry["resources"] = res
		}
		ts.entries = append(ts.entries, entry)
	}
	opts := &sdk.ServerOptions{Capabilities: &sdk.ServerCapabilities{Resources: &sdk.ResourceCapabilities{}}}
	if extension {
		opts.Capabilities.AddExtension(mcpsource.Extension, nil)
	}
	t.Cleanup(ts.unblock)
	ts.srv = sdk.NewServer(&sdk.Implementation{Name: "skills-test", Version: "1"}, opts)
	ts.srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			ts.mu.Lock()
			ts.counts[method]++
			if p, ok := req.GetParams().(*sdk.ReadResourceParams); ok {
				ts.reads[p.URI]++
			}
			hang := ts.hang[method]
			if p, ok := req.GetParams().(*sdk.ReadResourceParams); ok && ts.hang[p.URI] {
				hang = true
			}
			ts.mu.Unlock()
			if hang {
				// The client's timeout decides the test; the second
				// only spares closing a stateful HTTP session, which
				// waits for its requests, the SDK's 5-second bound.
				select {
				case <-ctx.Done():
				case <-ts.release:
				case <-time.After(time.Second):
				}
				return nil, errors.New("hung")
			}
			return next(ctx, method, req)
		}
	})
	if err := sdk.AddReceivingCustomMethod(ts.srv, "skills/list", ts.list); err != nil {
		t.Fatal(err)
	}
	if err := sdk.AddReceivingCustomMethod(ts.srv, "skills/get", ts.get); err != nil {
		t.Fatal(err)
	}
	return ts
}

// start registers the resources (after a test edited served or extra).
func (ts *testServer) start() {
	all := maps.Clone(ts.served)
	maps.Copy(all, ts.extra)
	for uri := range all {
		ts.srv.AddResource(&sdk.Resource{URI: uri, Name: uri, MIMEType: "text/plain"}, func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			ts.mu.Lock()
			data, ok := ts.served[req.Params.URI]
			if !ok {
				data, ok = ts.extra[req.Params.URI]
			}
			ts.mu.Unlock()
			if !ok {
				return nil, sdk.ResourceNotFoundError(req.Params.URI)
			}
			c := &sdk.ResourceContents{URI: req.Params.URI}
			if as, ok := ts.answerAs[req.Params.URI]; ok {
				c.URI = as
			}
			if utf8.Valid(data) {
				c.Text = string(data)
			} else {
				c.Blob = data
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
		})
	}
}

func (ts *testServer) list(ctx context.Context, ss *sdk.ServerSession, p *testListParams) (*testListResult, error) {
	ts.mu.Lock()
	entries := slices.Clone(ts.entries)
	ts.mu.Unlock()
	start := 0
	if p.Cursor != "" && p.Cursor != "again" {
		start, _ = strconv.Atoi(p.Cursor)
	}
	end := len(entries)
	if ts.pageSize > 0 {
		end = min(start+ts.pageSize, len(entries))
	}
	res := &testListResult{ResultType: "complete", Skills: entries[start:end], Cacheable: sdk.Cacheable{CacheScope: "public"}}
	if res.Skills == nil {
		res.Skills = []map[string]any{}
	}
	if end < len(entries) {
		res.NextCursor = strconv.Itoa(end)
	}
	if ts.loop {
		res.NextCursor = "again"
	}
	if ts.edit != nil {
		ts.edit(start, res)
	}
	return res, nil
}

func (ts *testServer) get(ctx context.Context, ss *sdk.ServerSession, p *testGetParams) (*testGetResult, error) {
	for _, e := range ts.entries {
		if e["uri"] == p.URI {
			return &testGetResult{ResultType: "complete", Skill: e, Cacheable: sdk.Cacheable{CacheScope: "public"}}, nil
		}
	}
	return nil, sdk.ResourceNotFoundError(p.URI)
}

// count returns the number of requests of method received.
func (ts *testServer) count(method string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.counts[method]
}

// unblock answers the hung requests.
func (ts *testServer) unblock() { ts.once.Do(func() { close(ts.release) }) }

// methods returns the methods requested, sorted.
func (ts *testServer) methods() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return slices.Sorted(maps.Keys(ts.counts))
}

// readsOf returns the resources/read requests by URI.
func (ts *testServer) readsOf() map[string]int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return maps.Clone(ts.reads)
}

// transport names how a test reaches its server.
type transport string

const (
	inMemory  transport = "in-memory"
	httpT     transport = "http"
	stateless transport = "http-stateless" // protocol 2026-07-28
)

var transports = []transport{inMemory, httpT, stateless}

// connect starts ts and returns the URL and options New needs to reach
// it over tr.
func (ts *testServer) connect(t testing.TB, tr transport, opts *mcpsource.Options) (string, *mcpsource.Options) {
	t.Helper()
	ts.start()
	if opts == nil {
		opts = &mcpsource.Options{}
	}
	o := *opts
	switch tr {
	case inMemory:
		ct, st := sdk.NewInMemoryTransports()
		ss, err := ts.srv.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		o.Transport = ct
		if o.Label == "" {
			o.Label = "test"
		}
		return "", &o
	default:
		hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return ts.srv }, &sdk.StreamableHTTPOptions{Stateless: tr == stateless}))
		t.Cleanup(hs.Close)
		t.Cleanup(ts.unblock) // before hs.Close, which waits for hung requests
		return hs.URL + "/mcp", &o
	}
}

// open connects a Remote to ts over tr and closes it when the test ends.
func (ts *testServer) open(t testing.TB, tr transport, opts *mcpsource.Options) *mcpsource.Remote {
	t.Helper()
	url, o := ts.connect(t, tr, opts)
	r, err := mcpsource.New(context.Background(), url, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

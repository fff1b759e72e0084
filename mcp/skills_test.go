package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// alphaMD has every kind of front-matter field: the spec's, a metadata map
// with a non-string value, and fields no spec defines.
const alphaMD = `---
name: alpha
description: Does alpha things <fast> & "well".
license: Apache-2.0
metadata:
  version: 1.0
  author: someone
  tags: "a, b"
x-custom:
  - 1
  - two
  - nested: {k: true}
compatibility: Python 3.12
allowed-tools: Bash Read
---

# Alpha

Read references/guide.md.
`

// testSkills is the tree the tests serve: three skills within the test
// limits (8 files, 8192 bytes), one over the files limit and one over the
// bytes limit.
func testSkills() map[string]string {
	files := map[string]string{
		"alpha/SKILL.md":                     alphaMD,
		"alpha/references/guide.md":          "# Guide\n",
		"alpha/references/deep/more.md":      "more\n",
		"alpha/scripts/run.py":               "print('hi')\n",
		"alpha/assets/logo.png":              "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe",
		"alpha/empty.txt":                    "",
		"alpha/LICENSE":                      "Permission is hereby granted, free of charge.\n",
		"alpha/data.bin":                     "\x00\x01\x02\x03\xff\xfe binary",
		"beta/SKILL.md":                      "---\nname: beta\ndescription: Beta skill.\n---\nBody.\n",
		"beta/notes.md":                      "notes\n",
		"gamma/SKILL.md":                     "---\nname: gamma\ndescription: Gamma skill.\nmetadata:\n  owner: team\n---\nBody.\n",
		"heavy/SKILL.md":                     "---\nname: heavy\ndescription: Too many bytes.\n---\n",
		"heavy/blob.txt":                     strings.Repeat("x", 9000),
		"big/SKILL.md":                       "---\nname: big\ndescription: Too many files.\n---\n",
		"alpha/node_modules/ignored/file.js": "ignored\n",
	}
	for i := range 8 {
		files[fmt.Sprintf("big/f%d.txt", i)] = "f\n"
	}
	return files
}

// testLimits are the limits the tests serve with.
const (
	testMaxFiles = 8
	testMaxBytes = 8192
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Back-date everything, so an edit in a test has a new modification
	// time for Refresh to see.
	at := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func newRegistry(t *testing.T, root string) *registry.Registry {
	t.Helper()
	src, err := source.Dir(root, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(t.Context(), []source.Source{src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// wire records the results the client receives, by method, as raw JSON.
type wire struct {
	mu      sync.Mutex
	methods map[string]string
	results map[string][]json.RawMessage
}

func (w *wire) last(t *testing.T, method string) json.RawMessage {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	rs := w.results[method]
	if len(rs) == 0 {
		t.Fatalf("no %s result on the wire", method)
	}
	return rs[len(rs)-1]
}

type captureTransport struct {
	sdk.Transport
	w *wire
}

func (c *captureTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := c.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: conn, w: c.w}, nil
}

type captureConn struct {
	sdk.Connection
	w *wire
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.w.mu.Lock()
		c.w.methods[fmt.Sprint(req.ID.Raw())] = req.Method
		c.w.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil {
		c.w.mu.Lock()
		m := c.w.methods[fmt.Sprint(resp.ID.Raw())]
		c.w.results[m] = append(c.w.results[m], slices.Clone(resp.Result))
		c.w.mu.Unlock()
	}
	return msg, err
}

// harness is one SDK server with the skills extension and a Go SDK client
// connected to it in memory.
type harness struct {
	root    string
	reg     *registry.Registry
	skills  *skillsServer
	cs      *sdk.ClientSession
	wire    *wire
	changed chan struct{}
}

// protocols are the revisions the tests run under: the session-based one
// (initialize) and 2026-07-28 (server/discover, subscriptions/listen).
var protocols = []string{"2025-11-25", "2026-07-28"}

func newHarness(t *testing.T, protocol string, cfg skillsConfig, filters ...registry.Filter) *harness {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, testSkills())
	h := &harness{root: root, reg: newRegistry(t, root), changed: make(chan struct{}, 64)}
	h.wire = &wire{methods: map[string]string{}, results: map[string][]json.RawMessage{}}
	caps := &sdk.ServerCapabilities{}
	capabilities(caps)
	srv := sdk.NewServer(&sdk.Implementation{Name: "skillkit-test", Version: "v0"}, &sdk.ServerOptions{Capabilities: caps})
	cfg.Snapshot = func(ctx context.Context) *registry.Snapshot { return h.reg.Snapshot().View(ctx, filters...) }
	if cfg.maxFiles == 0 {
		cfg.maxFiles = testMaxFiles
	}
	if cfg.maxBytes == 0 {
		cfg.maxBytes = testMaxBytes
	}
	h.skills = addSkills(srv, cfg)
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "v0"}, &sdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			select {
			case h.changed <- struct{}{}:
			default:
			}
		},
	})
	must(sdk.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](client, methodSkillsList))
	must(sdk.AddSendingCustomMethod[*getSkillParams, *getSkillResult](client, methodSkillsGet))
	must(sdk.AddSendingCustomMethod[*readDirParams, *readDirResult](client, methodDirRead))
	h.cs, err = client.Connect(t.Context(), &captureTransport{Transport: ct, w: h.wire}, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.cs.Close() })
	return h
}

func (h *harness) list(t *testing.T, cursor string) *listSkillsResult {
	t.Helper()
	res, err := sdk.CallCustomMethod[*listSkillsParams, *listSkillsResult](t.Context(), h.cs, methodSkillsList, &listSkillsParams{Cursor: cursor})
	if err != nil {
		t.Fatalf("skills/list cursor %q: %v", cursor, err)
	}
	return res
}

// listAll pages through skills/list and returns the entries and the raw
// pages.
func (h *harness) listAll(t *testing.T) ([]*skillEntry, []json.RawMessage) {
	t.Helper()
	var entries []*skillEntry
	var pages []json.RawMessage
	cursor := ""
	for range 100 {
		res := h.list(t, cursor)
		entries = append(entries, res.Skills...)
		pages = append(pages, h.wire.last(t, methodSkillsList))
		if res.NextCursor == "" {
			return entries, pages
		}
		cursor = res.NextCursor
	}
	t.Fatal("skills/list did not end after 100 pages")
	return nil, nil
}

// read reads uri with resources/read and returns its bytes and MIME type.
func (h *harness) read(t *testing.T, uri string) ([]byte, string, bool) {
	t.Helper()
	res, err := h.cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %d contents, want 1", uri, len(res.Contents))
	}
	c := res.Contents[0]
	if c.URI != uri {
		t.Errorf("resources/read %s: contents for %q", uri, c.URI)
	}
	if c.Blob != nil {
		return c.Blob, c.MIMEType, false
	}
	return []byte(c.Text), c.MIMEType, true
}

// code returns the JSON-RPC error code of err, or 0.
func code(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// diskFiles lists the files of a skill folder that a manifest holds (the
// test trees have no links, nested skills or ignored folders but
// node_modules).
func diskFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSkillsList(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			h := newHarness(t, proto, skillsConfig{PageSize: 1})
			entries, pages := h.listAll(t)
			var names []string
			for _, e := range entries {
				names = append(names, strings.TrimSuffix(strings.TrimPrefix(e.URI, "skill://"), "/SKILL.md"))
			}
			// big and heavy are over the test limits; the last page ends
			// the listing without a cursor.
			if want := []string{"alpha", "beta", "gamma"}; !slices.Equal(names, want) {
				t.Fatalf("listed %q; want %q", names, want)
			}
			for i, page := range pages {
				var raw map[string]json.RawMessage
				if err := json.Unmarshal(page, &raw); err != nil {
					t.Fatal(err)
				}
				for key, want := range map[string]string{"resultType": `"complete"`, "ttlMs": "60000", "cacheScope": `"public"`} {
					if got := string(raw[key]); got != want {
						t.Errorf("page %d: %s = %s; want %s (page %s)", i, key, got, want, page)
					}
				}
				var skills []json.RawMessage
				if err := json.Unmarshal(raw["skills"], &skills); err != nil || len(skills) > 1 {
					t.Errorf("page %d holds %d skills (%v); want at most PageSize 1", i, len(skills), err)
				}
				_, hasNext := raw["nextCursor"]
				if hasNext != (i < len(pages)-1) {
					t.Errorf("page %d of %d: nextCursor present = %v", i, len(pages), hasNext)
				}
			}
			// Every entry is complete and its digests are those of the
			// bytes resources/read serves (and of the files on disk).
			for _, e := range entries {
				name := strings.TrimSuffix(strings.TrimPrefix(e.URI, "skill://"), "/SKILL.md")
				disk := diskFiles(t, filepath.Join(h.root, name))
				var got []string
				for _, r := range e.Resources {
					rel := strings.TrimPrefix(r.URI, "skill://"+name+"/")
					got = append(got, rel)
					data, _, _ := h.read(t, r.URI)
					sum := sha256.Sum256(data)
					if want := "sha256:" + hex.EncodeToString(sum[:]); r.Digest != want {
						t.Errorf("%s: digest %s; the bytes read hash to %s", r.URI, r.Digest, want)
					}
					if int64(len(data)) != r.Size {
						t.Errorf("%s: size %d; read %d bytes", r.URI, r.Size, len(data))
					}
					if !bytes.Equal(data, disk[rel]) {
						t.Errorf("%s: read %q; the file holds %q", r.URI, data, disk[rel])
					}
				}
				want := slices.Sorted(func(yield func(string) bool) {
					for k := range disk {
						if !yield(k) {
							return
						}
					}
				})
				if !slices.Equal(got, want) {
					t.Errorf("%s: resources %q; want every file once, SKILL.md included: %q", name, got, want)
				}
			}
		})
	}
}

func TestSkillsListCursor(t *testing.T) {
	h := newHarness(t, protocols[0], skillsConfig{})
	res := h.list(t, "")
	if len(res.Skills) != 3 || res.NextCursor != "" {
		t.Errorf("one page of 100: %d skills, cursor %q; want 3 and none", len(res.Skills), res.NextCursor)
	}
	for _, bad := range []string{"!!", "not base64 at all"} {
		_, err := sdk.CallCustomMethod[*listSkillsParams, *listSkillsResult](t.Context(), h.cs, methodSkillsList, &listSkillsParams{Cursor: bad})
		if code(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("cursor %q: %v; want -32602", bad, err)
		}
	}
}

func TestSkillsFrontmatterVerbatim(t *testing.T) {
	h := newHarness(t, protocols[0], skillsConfig{})
	res := h.list(t, "")
	alpha := res.Skills[0]
	// The YAML header decoded on its own is what the entry carries.
	header := strings.SplitN(alphaMD, "---\n", 3)[1]
	var fromYAML map[string]any
	if err := yaml.Unmarshal([]byte(header), &fromYAML); err != nil {
		t.Fatal(err)
	}
	wantJSON, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	if err := json.Unmarshal(wantJSON, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(alpha.Frontmatter, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frontmatter (-yaml +entry):\n%s", diff)
	}
	// Fields keep the file's order.
	dec := json.NewDecoder(bytes.NewReader(alpha.Frontmatter))
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			continue
		case json.Delim('}'), json.Delim(']'):
			depth--
			continue
		}
		if s, ok := tok.(string); ok && depth == 1 && dec.More() {
			keys = append(keys, s)
			// Skip the value.
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := []string{"name", "description", "license", "metadata", "x-custom", "compatibility", "allowed-tools"}; !slices.Equal(keys, want) {
		t.Errorf("frontmatter keys %q; want the file's order %q", keys, want)
	}
}

func TestSkillsListGolden(t *testing.T) {
	h := newHarness(t, protocols[0], skillsConfig{PageSize: 1})
	h.list(t, "")
	var buf bytes.Buffer
	if err := json.Indent(&buf, h.wire.last(t, methodSkillsList), "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	golden := filepath.Join("testdata", "skills_list.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./mcp -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("skills/list result (-golden +got):\n%s", diff)
	}
}

func TestSkillsGet(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			h := newHarness(t, proto, skillsConfig{})
			listed := h.list(t, "").Skills
			for _, e := range listed {
				res, err := sdk.CallCustomMethod[*getSkillParams, *getSkillResult](t.Context(), h.cs, methodSkillsGet, &getSkillParams{URI: e.URI})
				if err != nil {
					t.Fatalf("skills/get %s: %v", e.URI, err)
				}
				if diff := cmp.Diff(e, res.Skill); diff != "" {
					t.Errorf("skills/get %s differs from its skills/list entry:\n%s", e.URI, diff)
				}
				var raw map[string]json.RawMessage
				if err := json.Unmarshal(h.wire.last(t, methodSkillsGet), &raw); err != nil {
					t.Fatal(err)
				}
				for key, want := range map[string]string{"resultType": `"complete"`, "ttlMs": "60000", "cacheScope": `"public"`} {
					if got := string(raw[key]); got != want {
						t.Errorf("skills/get %s: %s = %s; want %s", e.URI, key, got, want)
					}
				}
				if _, ok := raw["nextCursor"]; ok {
					t.Errorf("skills/get %s carries a cursor", e.URI)
				}
			}
			for _, uri := range []string{
				"skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md",
				"skill://big/SKILL.md",
				"skill://heavy/SKILL.md",
				"skill://alpha/references/guide.md",
				"skill://alpha",
				"skill://x/../y/SKILL.md",
				"skill://alpha/%2e%2e/SKILL.md",
				"skill://alpha/SKILL.md\x00",
				"skill:///etc/passwd",
				"skill://a/b/../../c",
				"skill://alpha/./SKILL.md",
				"skill://alpha/SKILL.md?x",
				"file:///etc/passwd",
				"",
			} {
				_, err := sdk.CallCustomMethod[*getSkillParams, *getSkillResult](t.Context(), h.cs, methodSkillsGet, &getSkillParams{URI: uri})
				if code(err) != jsonrpc.CodeInvalidParams {
					t.Errorf("skills/get %q: %v; want -32602", uri, err)
				}
			}
		})
	}
}

func TestReadResource(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			h := newHarness(t, proto, skillsConfig{})
			for _, tc := range []struct {
				uri, mime string
				text      bool
			}{
				{"skill://alpha/SKILL.md", "text/markdown", true},
				{"skill://alpha/references/guide.md", "text/markdown", true},
				{"skill://alpha/scripts/run.py", "text/x-python", true},
				{"skill://alpha/assets/logo.png", "image/png", false},
				{"skill://alpha/LICENSE", "text/plain", true},
				{"skill://alpha/data.bin", "application/octet-stream", false},
				{"skill://alpha/empty.txt", "text/plain", false}, // an empty blob: the SDK drops empty text
			} {
				data, mime, text := h.read(t, tc.uri)
				if mime != tc.mime || text != tc.text {
					t.Errorf("%s: %s text=%v; want %s text=%v", tc.uri, mime, text, tc.mime, tc.text)
				}
				rel := strings.TrimPrefix(tc.uri, "skill://alpha/")
				if want := testSkills()["alpha/"+rel]; string(data) != want {
					t.Errorf("%s: read %q; want %q", tc.uri, data, want)
				}
			}
			for _, uri := range []string{
				"skill://alpha/missing.md",
				"skill://alpha/node_modules/ignored/file.js",
				"skill://alpha/references",
				"skill://alpha",
				"skill://big/SKILL.md",
				"skill://big/f1.txt",
				"skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md",
				"skill://x/../y/SKILL.md",
				"skill://alpha/%2e%2e/beta/SKILL.md",
				"skill://alpha/references/%2E%2E/SKILL.md",
				"skill://alpha/SKILL.md%00",
				"skill:///etc/passwd",
				"skill://a/b/../../c",
				"skill://alpha/references\\guide.md",
				"skill://alpha//SKILL.md",
				"skill://alpha/SKILL.md#x",
			} {
				_, err := h.cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
				if code(err) != jsonrpc.CodeInvalidParams {
					t.Errorf("resources/read %q: %v; want -32602", uri, err)
				}
			}
		})
	}
}

// TestReadResourceStale checks that a file rewritten after its digest was
// published is refused (-32603) rather than served with other bytes.
func TestReadResourceStale(t *testing.T) {
	h := newHarness(t, protocols[0], skillsConfig{})
	h.list(t, "") // pins every digest
	if err := os.WriteFile(filepath.Join(h.root, "beta", "notes.md"), []byte("NOTES\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := h.cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "skill://beta/notes.md"})
	if code(err) != jsonrpc.CodeInternalError {
		t.Fatalf("read of a rewritten file: %v; want -32603", err)
	}
	if strings.Contains(err.Error(), h.root) {
		t.Errorf("error %q shows a host path", err)
	}
}

func TestReadDirectory(t *testing.T) {
	type kid struct{ uri, name, mime string }
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			h := newHarness(t, proto, skillsConfig{})
			readDir := func(uri, cursor string) (*readDirResult, error) {
				return sdk.CallCustomMethod[*readDirParams, *readDirResult](t.Context(), h.cs, methodDirRead, &readDirParams{URI: uri, Cursor: cursor})
			}
			for _, tc := range []struct {
				uri  string
				want []kid
			}{
				{"skill://alpha", []kid{
					{"skill://alpha/LICENSE", "LICENSE", "text/plain"},
					{"skill://alpha/SKILL.md", "SKILL.md", "text/markdown"},
					{"skill://alpha/assets", "assets", "inode/directory"},
					{"skill://alpha/data.bin", "data.bin", "application/octet-stream"},
					{"skill://alpha/empty.txt", "empty.txt", "text/plain"},
					{"skill://alpha/references", "references", "inode/directory"},
					{"skill://alpha/scripts", "scripts", "inode/directory"},
				}},
				{"skill://alpha/references", []kid{
					{"skill://alpha/references/deep", "deep", "inode/directory"},
					{"skill://alpha/references/guide.md", "guide.md", "text/markdown"},
				}},
				{"skill://alpha/references/deep", []kid{
					{"skill://alpha/references/deep/more.md", "more.md", "text/markdown"},
				}},
			} {
				res, err := readDir(tc.uri, "")
				if err != nil {
					t.Fatalf("resources/directory/read %s: %v", tc.uri, err)
				}
				var got []kid
				for _, r := range res.Resources {
					got = append(got, kid{r.URI, r.Name, r.MIMEType})
				}
				if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(kid{})); diff != "" {
					t.Errorf("resources/directory/read %s (-want +got):\n%s", tc.uri, diff)
				}
				if res.NextCursor != "" {
					t.Errorf("%s: cursor %q on the only page", tc.uri, res.NextCursor)
				}
				var raw map[string]json.RawMessage
				if err := json.Unmarshal(h.wire.last(t, methodDirRead), &raw); err != nil {
					t.Fatal(err)
				}
				for key, want := range map[string]string{"resultType": `"complete"`, "ttlMs": "60000", "cacheScope": `"public"`} {
					if got := string(raw[key]); got != want {
						t.Errorf("%s: %s = %s; want %s", tc.uri, key, got, want)
					}
				}
			}
			for _, uri := range []string{
				"skill://alpha/SKILL.md",
				"skill://alpha/references/guide.md",
				"skill://alpha/nothing",
				"skill://alpha/node_modules",
				"skill://mcp-conformance-nonexistent-skill-9f3a2b",
				"skill://big",
				"skill://alpha/",
				"skill://alpha/references/..",
				"skill:///etc",
				"",
			} {
				if _, err := readDir(uri, ""); code(err) != jsonrpc.CodeInvalidParams {
					t.Errorf("resources/directory/read %q: %v; want -32602", uri, err)
				}
			}
		})
	}
}

func TestReadDirectoryPages(t *testing.T) {
	h := newHarness(t, protocols[1], skillsConfig{PageSize: 2})
	var names []string
	cursor := ""
	for range 10 {
		res, err := sdk.CallCustomMethod[*readDirParams, *readDirResult](t.Context(), h.cs, methodDirRead, &readDirParams{URI: "skill://alpha", Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Resources) > 2 {
			t.Errorf("page of %d; want at most 2", len(res.Resources))
		}
		for _, r := range res.Resources {
			names = append(names, r.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if want := []string{"LICENSE", "SKILL.md", "assets", "data.bin", "empty.txt", "references", "scripts"}; !slices.Equal(names, want) {
		t.Errorf("pages list %q; want %q", names, want)
	}
}

func TestResourceList(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			h := newHarness(t, proto, skillsConfig{})
			res, err := h.cs.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []sdk.Resource
			for _, r := range res.Resources {
				got = append(got, *r)
			}
			want := []sdk.Resource{
				{URI: "skill://alpha/SKILL.md", Name: "alpha", MIMEType: "text/markdown", Description: `Does alpha things <fast> & "well".`},
				{URI: "skill://beta/SKILL.md", Name: "beta", MIMEType: "text/markdown", Description: "Beta skill."},
				{URI: "skill://gamma/SKILL.md", Name: "gamma", MIMEType: "text/markdown", Description: "Gamma skill."},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("resources/list (-want +got):\n%s", diff)
			}
			tres, err := h.cs.ListResourceTemplates(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var templates []string
			for _, rt := range tres.ResourceTemplates {
				templates = append(templates, rt.URITemplate)
			}
			if want := []string{"skill://{name}/SKILL.md", "skill://{name}/{+path}"}; !slices.Equal(templates, want) {
				t.Errorf("templates %q; want %q", templates, want)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			h := newHarness(t, proto, skillsConfig{})
			caps := h.cs.InitializeResult().Capabilities
			ext, ok := caps.Extensions[extensionName].(map[string]any)
			if !ok || ext["directoryRead"] != true {
				t.Errorf("extensions[%q] = %#v; want directoryRead true", extensionName, caps.Extensions[extensionName])
			}
			if caps.Resources == nil || !caps.Resources.ListChanged {
				t.Errorf("resources capability %+v; want listChanged", caps.Resources)
			}
		})
	}
}

// TestChanged edits a skill, refreshes the registry and checks that the
// client is told and then sees the new content.
func TestChanged(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			h := newHarness(t, proto, skillsConfig{})
			before := h.list(t, "").Skills
			newMD := "---\nname: beta\ndescription: Beta, edited.\n---\nNew body.\n"
			if err := os.WriteFile(filepath.Join(h.root, "beta", "SKILL.md"), []byte(newMD), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(h.root, "gamma")); err != nil {
				t.Fatal(err)
			}
			if _, err := h.reg.Refresh(t.Context()); err != nil {
				t.Fatal(err)
			}
			h.skills.Changed(t.Context())
			select {
			case <-h.changed:
			case <-t.Context().Done():
				t.Fatal("no notifications/resources/list_changed")
			}
			after := h.list(t, "").Skills
			if len(after) != 2 || after[1].URI != "skill://beta/SKILL.md" {
				t.Fatalf("after the change: %d skills; want alpha and beta", len(after))
			}
			if before[1].Resources[0].Digest == after[1].Resources[0].Digest {
				t.Error("beta's SKILL.md digest did not change")
			}
			data, _, _ := h.read(t, "skill://beta/SKILL.md")
			if string(data) != newMD {
				t.Errorf("read %q after the change; want %q", data, newMD)
			}
			res, err := h.cs.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range res.Resources {
				uris = append(uris, r.URI)
				if r.URI == "skill://beta/SKILL.md" && r.Description != "Beta, edited." {
					t.Errorf("beta's resource description %q", r.Description)
				}
			}
			if want := []string{"skill://alpha/SKILL.md", "skill://beta/SKILL.md"}; !slices.Equal(uris, want) {
				t.Errorf("resources/list %q; want %q", uris, want)
			}
			if _, err := h.cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "skill://gamma/SKILL.md"}); code(err) != jsonrpc.CodeInvalidParams {
				t.Errorf("read of a removed skill: %v; want -32602", err)
			}
		})
	}
}

func TestWithheld(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, testSkills())
	snap := newRegistry(t, root).Snapshot()
	got := limits{files: testMaxFiles, bytes: testMaxBytes}.withheld(t.Context(), snap)
	want := []string{
		`skill "big" is not served over MCP: it has 9 files, over the skills extension's limit of 8 per skill`,
		`skill "heavy" is not served over MCP: it holds 9049 bytes, over the skills extension's limit of 8192 (8192 bytes) per skill`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withheld (-want +got):\n%s", diff)
	}
	if lines := withheld(t.Context(), snap); len(lines) != 0 {
		t.Errorf("withheld at the extension's limits: %q; want none", lines)
	}
}

// TestWithheldAtDefaultLimits serves skills exactly at the extension's
// limits (512 files; 16 MiB) and withholds those one over.
func TestWithheldAtDefaultLimits(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	md := func(name string) string { return "---\nname: " + name + "\ndescription: At the limit.\n---\n" }
	for _, name := range []string{"files-at", "files-over", "bytes-at", "bytes-over"} {
		files[name+"/SKILL.md"] = md(name)
	}
	for i := range maxSkillFiles - 1 {
		files[fmt.Sprintf("files-at/f%03d.txt", i)] = "x"
	}
	for i := range maxSkillFiles {
		files[fmt.Sprintf("files-over/f%03d.txt", i)] = "x"
	}
	files["bytes-at/blob.bin"] = strings.Repeat("b", maxSkillBytes-len(md("bytes-at")))
	files["bytes-over/blob.bin"] = strings.Repeat("b", maxSkillBytes-len(md("bytes-over"))+1)
	writeTree(t, root, files)
	got := withheld(t.Context(), newRegistry(t, root).Snapshot())
	want := []string{
		`skill "bytes-over" is not served over MCP: it holds 16777217 bytes, over the skills extension's limit of 16777216 (16 MiB) per skill`,
		`skill "files-over" is not served over MCP: it has 513 files, over the skills extension's limit of 512 per skill`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withheld (-want +got):\n%s", diff)
	}
}

func TestWithheldNames(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("a", 65)
	writeTree(t, root, map[string]string{
		long + "/SKILL.md":   "---\nname: " + long + "\ndescription: Long.\n---\n",
		"noname/SKILL.md":    "---\ndescription: No name field.\n---\n",
		"ok/SKILL.md":        "---\nname: ok\ndescription: Fine.\n---\n",
		"numname/SKILL.md":   "---\nname: numname\ndescription: 42\n---\n",
		"emptydesc/SKILL.md": "---\nname: emptydesc\ndescription: \"\"\n---\n",
	})
	got := withheld(t.Context(), newRegistry(t, root).Snapshot())
	// emptydesc does not load at all (no description).
	want := []string{
		`skill "` + long + `" is not served over MCP: its name is not a valid skill name (1 to 64 lower-case letters, digits and single hyphens), which a skill:// URI must end in`,
		`skill "noname" is not served over MCP: its SKILL.md front matter has no name field equal to "noname", which the skill:// URI ends in`,
		`skill "numname" is not served over MCP: its SKILL.md front matter has no description text`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withheld (-want +got):\n%s", diff)
	}
}

// TestSkillsView serves a view that hides a skill: no method shows or
// serves it.
func TestSkillsView(t *testing.T) {
	noBeta := func(_ context.Context, s skill.Summary) bool { return s.Name != "beta" }
	h := newHarness(t, protocols[1], skillsConfig{}, noBeta)
	var names []string
	for _, e := range h.list(t, "").Skills {
		names = append(names, e.URI)
	}
	if want := []string{"skill://alpha/SKILL.md", "skill://gamma/SKILL.md"}; !slices.Equal(names, want) {
		t.Errorf("skills/list %q; want %q", names, want)
	}
	res, err := h.cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Resources {
		if strings.Contains(r.URI, "beta") {
			t.Errorf("resources/list shows %s", r.URI)
		}
	}
	if _, err := sdk.CallCustomMethod[*getSkillParams, *getSkillResult](t.Context(), h.cs, methodSkillsGet, &getSkillParams{URI: "skill://beta/SKILL.md"}); code(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("skills/get of a hidden skill: %v; want -32602", err)
	}
	if _, err := h.cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "skill://beta/notes.md"}); code(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("resources/read of a hidden skill: %v; want -32602", err)
	}
	if _, err := sdk.CallCustomMethod[*readDirParams, *readDirResult](t.Context(), h.cs, methodDirRead, &readDirParams{URI: "skill://beta"}); code(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("resources/directory/read of a hidden skill: %v; want -32602", err)
	}
}

// TestSkillsCacheFields checks the cache fields a configuration sets.
func TestSkillsCacheFields(t *testing.T) {
	for _, tc := range []struct {
		cfg        skillsConfig
		ttl, scope string
	}{
		{skillsConfig{}, "60000", `"public"`},
		{skillsConfig{TTL: 2500 * time.Millisecond}, "2500", `"public"`},
		{skillsConfig{Private: true}, "60000", `"private"`},
	} {
		h := newHarness(t, protocols[0], tc.cfg)
		h.list(t, "")
		if _, err := sdk.CallCustomMethod[*getSkillParams, *getSkillResult](t.Context(), h.cs, methodSkillsGet, &getSkillParams{URI: "skill://alpha/SKILL.md"}); err != nil {
			t.Fatal(err)
		}
		h.read(t, "skill://alpha/SKILL.md")
		for method, ttl := range map[string]string{methodSkillsList: tc.ttl, methodSkillsGet: tc.ttl, "resources/read": "0"} {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(h.wire.last(t, method), &raw); err != nil {
				t.Fatal(err)
			}
			if string(raw["ttlMs"]) != ttl || string(raw["cacheScope"]) != tc.scope {
				t.Errorf("%+v: %s ttlMs %s cacheScope %s; want %s %s", tc.cfg, method, raw["ttlMs"], raw["cacheScope"], ttl, tc.scope)
			}
		}
	}
}

// TestAddSkillsRefusesBadConfig checks that a configuration no caller can
// mean is refused at once.
func TestAddSkillsRefusesBadConfig(t *testing.T) {
	snap := func(context.Context) *registry.Snapshot { return nil }
	for name, cfg := range map[string]skillsConfig{
		"no snapshot":       {},
		"negative pagesize": {Snapshot: snap, PageSize: -1},
		"negative ttl":      {Snapshot: snap, TTL: -time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("addSkills(%+v) did not panic", cfg)
				}
			}()
			addSkills(sdk.NewServer(&sdk.Implementation{Name: "t", Version: "v0"}, nil), cfg)
		})
	}
}

// A skill file replaced on disk after the snapshot pinned its digest: with
// Renew, skills/list, skills/get and resources/read answer from a renewed
// snapshot (new bytes, new digest, the skill still listed); without it,
// the read is refused rather than served with a stale digest.
func TestSkillsStaleRenewed(t *testing.T) {
	for _, renew := range []bool{false, true} {
		t.Run(fmt.Sprintf("renew=%v", renew), func(t *testing.T) {
			var h *harness
			cfg := skillsConfig{}
			if renew {
				cfg.Renew = func(ctx context.Context, stale *registry.Snapshot) (*registry.Snapshot, error) {
					if _, err := h.reg.Renew(ctx, stale); err != nil {
						return nil, err
					}
					return h.reg.Snapshot(), nil
				}
			}
			h = newHarness(t, protocols[0], cfg)
			const uri = "skill://beta/notes.md"
			if data, _, _ := h.read(t, uri); string(data) != "notes\n" {
				t.Fatalf("before: %q", data)
			}
			h.list(t, "") // pins every digest
			p := filepath.Join(h.root, "beta", "notes.md")
			if err := os.WriteFile(p+".new", []byte("new notes!\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".new", p); err != nil {
				t.Fatal(err)
			}
			res, err := h.cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
			if !renew {
				if err == nil || !strings.Contains(err.Error(), "changing on disk") {
					t.Errorf("read without Renew: %v %+v, want it refused", err, res)
				}
				return
			}
			if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "new notes!\n" {
				t.Fatalf("read with Renew: %v %+v", err, res)
			}
			sum := sha256.Sum256([]byte("new notes!\n"))
			listed := false
			for _, e := range h.list(t, "").Skills {
				for _, r := range e.Resources {
					if r.URI == uri {
						listed = true
						if r.Digest != "sha256:"+hex.EncodeToString(sum[:]) {
							t.Errorf("digest %s, want that of the new bytes", r.Digest)
						}
					}
				}
			}
			if !listed {
				t.Error("skills/list lacks beta's notes.md")
			}
		})
	}
}

package mcpsource_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/source/mcpsource"
)

const pdfMD = `---
name: pdf
description: Fill and merge PDF forms.
license: MIT
metadata:
  owner: docs-team
  version: "2"
---
Use scripts/fill.py; see references/forms.md.
`

func pdfSkill() testSkill {
	return testSkill{path: "acme/docs/pdf", files: map[string]string{
		"SKILL.md":            pdfMD,
		"references/forms.md": "# Forms\nField names.\n",
		"scripts/fill.py":     "print('fill')\n",
	}}
}

func reviewSkill() testSkill {
	return testSkill{path: "review", files: map[string]string{
		"SKILL.md":     "---\nname: review\ndescription: Review a pull request.\n---\nRead the diff.\n",
		"checklist.md": "- tests\n",
	}}
}

const (
	pdfURI   = "skill://acme/docs/pdf/SKILL.md"
	formsURI = "skill://acme/docs/pdf/references/forms.md"
)

func TestJoinsRegistry(t *testing.T) {
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			ctx := context.Background()
			ts := newTestServer(t, true, pdfSkill(), reviewSkill())
			r := ts.open(t, tr, nil)
			t.Logf("protocol %s", mcpsource.ProtocolVersion(r))
			if v := mcpsource.ProtocolVersion(r); tr == stateless && v != "2026-07-28" {
				t.Errorf("protocol %s over a stateless handler, want 2026-07-28", v)
			}
			// New lists, and reads nothing.
			if n := ts.count("skills/list"); n != 1 {
				t.Errorf("skills/list requests at New = %d, want 1", n)
			}
			handshake := map[string]bool{"initialize": true, "notifications/initialized": true, "server/discover": true, "skills/list": true}
			for _, m := range ts.methods() {
				if !handshake[m] {
					t.Errorf("%s requested at New; want nothing but the handshake and skills/list", m)
				}
			}
			var dirs []string
			for _, s := range r.Skills() {
				dirs = append(dirs, s.Dir+"="+s.URI)
			}
			if want := []string{"pdf=" + pdfURI, "review=skill://review/SKILL.md"}; !slices.Equal(dirs, want) {
				t.Errorf("Skills = %v, want %v", dirs, want)
			}

			reg, err := registry.New(ctx, []source.Source{r.Source()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			snap := reg.Snapshot()
			for _, d := range snap.Diagnostics() {
				t.Errorf("diagnostic: %v", d)
			}
			var names []string
			for _, s := range snap.Summaries() {
				names = append(names, s.Name+"@"+s.Source)
			}
			if want := []string{"pdf@" + r.Label(), "review@" + r.Label()}; !slices.Equal(names, want) {
				t.Errorf("skills = %v, want %v", names, want)
			}
			// Discovery read each SKILL.md once, and nothing else.
			if got, want := ts.readsOf(), map[string]int{pdfURI: 1, "skill://review/SKILL.md": 1}; !mapsEqual(got, want) {
				t.Errorf("reads after discovery = %v, want %v", got, want)
			}

			body, err := snap.Body(ctx, "pdf")
			if err != nil || body != "Use scripts/fill.py; see references/forms.md." {
				t.Errorf("Body = %q, %v", body, err)
			}
			docs, err := snap.Docs(ctx, "pdf")
			if err != nil || !slices.Contains(docs, "references/forms.md") {
				t.Errorf("Docs = %v, %v", docs, err)
			}
			text, err := snap.DocText(ctx, "pdf", "references/forms.md")
			if err != nil || text != "# Forms\nField names.\n" {
				t.Errorf("DocText = %q, %v", text, err)
			}
			// The files are read from many goroutines at once.
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					data, err := snap.ReadFile(ctx, "pdf", "scripts/fill.py")
					if err != nil || string(data) != "print('fill')\n" {
						t.Errorf("ReadFile = %q, %v", data, err)
					}
					if _, err := snap.Digests(ctx, "review"); err != nil {
						t.Errorf("Digests: %v", err)
					}
				})
			}
			wg.Wait()
			m, err := snap.Digests(ctx, "pdf")
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range m.Files {
				if want := digest([]byte(pdfSkill().files[f.Path])); "sha256:"+f.SHA256 != want {
					t.Errorf("%s: sha256 %s, want %s", f.Path, f.SHA256, want)
				}
			}
			if n := ts.count("skills/list"); n != 1 {
				t.Errorf("skills/list requests = %d, want 1", n)
			}
			// A refresh with an unchanged listing reads nothing again.
			before := ts.count("resources/read")
			if _, err := reg.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			if after := ts.count("resources/read"); after != before {
				t.Errorf("Refresh read %d files; want none", after-before)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestVerification(t *testing.T) {
	dynSkill := testSkill{path: "dyn", dynamic: true, files: map[string]string{
		"SKILL.md": "---\nname: dyn\ndescription: Dynamic.\n---\nBody.\n",
		"other.md": "x\n",
	}}
	cases := []struct {
		name  string
		setup func(ts *testServer)
		file  string // read through the source's file system
		is    []error
		want  []string // in the error
		// unread is a URI the server must not have been asked for.
		unread string
	}{{
		name:  "tampered digest",
		setup: func(ts *testServer) { ts.served[formsURI] = []byte("# Forms\nField nameZ.\n") },
		file:  "pdf/references/forms.md",
		is:    []error{mcpsource.ErrVerify},
		want:  []string{formsURI, "has sha256:", "the listing says sha256:"},
	}, {
		name:  "tampered size",
		setup: func(ts *testServer) { ts.served[formsURI] = []byte("# Forms\nField names, and more.\n") },
		file:  "pdf/references/forms.md",
		is:    []error{mcpsource.ErrVerify},
		want:  []string{formsURI, "is 31 bytes; the listing says 21"},
	}, {
		name: "front matter differs from the listing",
		setup: func(ts *testServer) {
			ts.entries[0]["frontmatter"].(map[string]any)["description"] = "Something else."
		},
		file: "pdf/SKILL.md",
		is:   []error{mcpsource.ErrVerify},
		want: []string{pdfURI, `front matter differs from the listing: field "description" is "\"Something else.\"" in the listing, "\"Fill and merge PDF forms.\"" in the file`},
	}, {
		name: "field missing from the listing",
		setup: func(ts *testServer) {
			delete(ts.entries[0]["frontmatter"].(map[string]any), "license")
		},
		file: "pdf/SKILL.md",
		is:   []error{mcpsource.ErrVerify},
		want: []string{pdfURI, `field "license" is in the file but not listed`},
	}, {
		name: "answer for another URI",
		setup: func(ts *testServer) {
			ts.answerAs[formsURI] = "skill://acme/docs/pdf/scripts/fill.py"
		},
		file: "pdf/references/forms.md",
		is:   []error{mcpsource.ErrVerify},
		want: []string{formsURI, "the server answered with 1 contents, none for this URI"},
	}, {
		name:   "file outside the manifest",
		setup:  func(ts *testServer) { ts.extra["skill://acme/docs/pdf/secret.txt"] = []byte("secret") },
		file:   "pdf/secret.txt",
		is:     []error{mcpsource.ErrNotListed, mcpsource.ErrVerify, fs.ErrNotExist},
		want:   []string{`"secret.txt" is not a file of skill "` + pdfURI + `"; refused without reading it`},
		unread: "skill://acme/docs/pdf/secret.txt",
	}, {
		name:   "other file of a dynamic skill",
		file:   "dyn/other.md",
		is:     []error{mcpsource.ErrDynamic, fs.ErrNotExist},
		want:   []string{"skill://dyn/other.md", "dynamic"},
		unread: "skill://dyn/other.md",
	}}
	for _, tr := range transports {
		for _, c := range cases {
			t.Run(string(tr)+"/"+c.name, func(t *testing.T) {
				ts := newTestServer(t, true, pdfSkill(), dynSkill)
				if c.setup != nil {
					c.setup(ts)
				}
				r := ts.open(t, tr, nil)
				_, err := fs.ReadFile(r.Source().FS, c.file)
				if err == nil {
					t.Fatalf("read %s: no error", c.file)
				}
				for _, target := range c.is {
					if !errors.Is(err, target) {
						t.Errorf("error %q is not %v", err, target)
					}
				}
				for _, w := range append(c.want, "mcp server "+r.Label()+": ") {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if c.unread != "" && ts.readsOf()[c.unread] != 0 {
					t.Errorf("%s was requested", c.unread)
				}
			})
		}
	}
}

// A skill that fails verification at discovery is left out of the
// registry, with a diagnostic naming the server and the URI.
func TestVerificationFailureSkipsSkill(t *testing.T) {
	ts := newTestServer(t, true, pdfSkill(), reviewSkill())
	ts.entries[0]["frontmatter"].(map[string]any)["description"] = "Something else."
	r := ts.open(t, inMemory, nil)
	reg, err := registry.New(context.Background(), []source.Source{r.Source()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := reg.Snapshot()
	if _, ok := snap.Lookup("pdf"); ok {
		t.Error("pdf joined the registry")
	}
	if _, ok := snap.Lookup("review"); !ok {
		t.Error("review did not join the registry")
	}
	diags := fmt.Sprint(snap.Diagnostics())
	for _, w := range []string{"test/pdf/SKILL.md", pdfURI, "front matter differs", "verification failed"} {
		if !strings.Contains(diags, w) {
			t.Errorf("diagnostics %s do not contain %q", diags, w)
		}
	}
}

func TestPagination(t *testing.T) {
	var skills []testSkill
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		skills = append(skills, testSkill{path: "team/" + n, files: map[string]string{"SKILL.md": "---\nname: " + n + "\ndescription: Skill " + n + ".\n---\n"}})
	}
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cases := []struct {
				maxPages int
				loop     bool
				wantErr  string
			}{
				{maxPages: 0},
				{maxPages: 3},
				{maxPages: 2, wantErr: "skills/list has more than 2 pages; raise Options.MaxPages"},
				{loop: true, wantErr: "returned a cursor it had returned before; the listing loops"},
			}
			for _, c := range cases {
				ts := newTestServer(t, true, skills...)
				ts.pageSize, ts.loop = 2, c.loop
				url, o := ts.connect(t, tr, &mcpsource.Options{MaxPages: c.maxPages})
				r, err := mcpsource.New(context.Background(), url, o)
				if c.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), c.wantErr) {
						t.Errorf("MaxPages %d, loop %v: error %v, want %q", c.maxPages, c.loop, err, c.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("MaxPages %d: %v", c.maxPages, err)
				}
				if n := len(r.Skills()); n != 5 {
					t.Errorf("MaxPages %d: %d skills, want 5", c.maxPages, n)
				}
				if n := ts.count("skills/list"); n != 3 {
					t.Errorf("MaxPages %d: %d pages requested, want 3", c.maxPages, n)
				}
				r.Close()
			}
		})
	}
}

func TestListingBytesLimit(t *testing.T) {
	ts := newTestServer(t, true, pdfSkill(), reviewSkill())
	ts.pageSize = 1
	r := ts.open(t, inMemory, nil)
	n := mcpsource.ListedBytes(r)
	if n <= 0 {
		t.Fatalf("listed bytes = %d", n)
	}
	for _, c := range []struct {
		max int64
		ok  bool
	}{{n, true}, {n - 1, false}} {
		ts := newTestServer(t, true, pdfSkill(), reviewSkill())
		ts.pageSize = 1
		url, o := ts.connect(t, inMemory, &mcpsource.Options{MaxListBytes: c.max})
		r, err := mcpsource.New(context.Background(), url, o)
		switch {
		case c.ok && err != nil:
			t.Errorf("MaxListBytes %d (the listing's size): %v", c.max, err)
		case !c.ok && !errors.Is(err, mcpsource.ErrLimit):
			t.Errorf("MaxListBytes %d: error %v, want ErrLimit", c.max, err)
		case !c.ok && !strings.Contains(err.Error(), fmt.Sprintf("skills/list is over %d bytes (at page 2); raise Options.MaxListBytes", c.max)):
			t.Errorf("MaxListBytes %d: error %v", c.max, err)
		}
		if r != nil {
			r.Close()
		}
	}
}

func TestSkillLimits(t *testing.T) {
	s := pdfSkill()
	var total int64
	for _, v := range s.files {
		total += int64(len(v))
	}
	cases := []struct {
		opts mcpsource.Options
		want string // the reason pdf is skipped; "" when served
	}{
		{mcpsource.Options{}, ""},
		{mcpsource.Options{MaxFiles: 3}, ""},
		{mcpsource.Options{MaxFiles: 2}, "lists 3 files, over the 2-file limit (Options.MaxFiles)"},
		{mcpsource.Options{MaxBytes: total}, ""},
		{mcpsource.Options{MaxBytes: total - 1}, fmt.Sprintf("lists over %d bytes of files, the per-skill limit (Options.MaxBytes)", total-1)},
	}
	for _, c := range cases {
		ts := newTestServer(t, true, s, reviewSkill())
		r := ts.open(t, inMemory, &c.opts)
		served := len(r.Skills()) == 2
		skipped := r.Skipped()
		switch {
		case c.want == "" && (!served || len(skipped) != 0):
			t.Errorf("%+v: pdf not served: %v", c.opts, skipped)
		case c.want != "" && (len(skipped) != 1 || skipped[0].URI != pdfURI || !strings.Contains(skipped[0].Reason, c.want)):
			t.Errorf("%+v: skipped %v, want pdf for %q", c.opts, skipped, c.want)
		}
	}
	// The defaults are the extension's limits.
	if mcpsource.DefaultMaxFiles != 512 || mcpsource.DefaultMaxBytes != 16<<20 {
		t.Errorf("defaults %d files, %d bytes", mcpsource.DefaultMaxFiles, mcpsource.DefaultMaxBytes)
	}
}

func TestInvalidEntries(t *testing.T) {
	cases := []struct {
		name string
		edit func(e map[string]any)
		want string
	}{
		{"not a skill URI", func(e map[string]any) { e["uri"] = "https://x/SKILL.md" }, `does not start with skill://`},
		{"no SKILL.md", func(e map[string]any) { e["uri"] = "skill://x/README.md" }, `does not name a SKILL.md`},
		{"dot segment", func(e map[string]any) { e["uri"] = "skill://a/../pdf/SKILL.md" }, `path segment ".." is not allowed`},
		{"name is not the folder", func(e map[string]any) { e["frontmatter"].(map[string]any)["name"] = "other" }, `frontmatter name "other" is not the last segment`},
		{"frontmatter not an object", func(e map[string]any) { e["frontmatter"] = "x" }, `frontmatter is not a JSON object`},
		{"bad digest", func(e map[string]any) { e["resources"].([]any)[0].(map[string]any)["digest"] = "sha256:ABC" }, `expected "sha256:" and 64 lower-case hex digits`},
		{"upper-case digest", func(e map[string]any) {
			r := e["resources"].([]any)[0].(map[string]any)
			r["digest"] = strings.ToUpper(r["digest"].(string)[7:])
		}, `expected "sha256:"`},
		{"no size", func(e map[string]any) { delete(e["resources"].([]any)[0].(map[string]any), "size") }, `has no size`},
		{"resource of another skill", func(e map[string]any) {
			e["resources"].([]any)[0].(map[string]any)["uri"] = "skill://review/SKILL.md"
		}, `is not below the skill's skill://acme/docs/pdf/`},
		{"SKILL.md not listed", func(e map[string]any) {
			e["resources"] = slices.DeleteFunc(e["resources"].([]any), func(x any) bool { return x.(map[string]any)["uri"] == pdfURI })
		}, `its resources do not include ` + pdfURI},
		{"resources neither", func(e map[string]any) { e["resources"] = "static" }, `resources is "static"`},
		{"file and folder", func(e map[string]any) {
			e["resources"] = append(e["resources"].([]any), map[string]any{"uri": "skill://acme/docs/pdf/references", "digest": digest(nil), "size": 0})
		}, `"references" is listed as a file and implied as a folder`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := newTestServer(t, true, pdfSkill(), reviewSkill())
			c.edit(ts.entries[0])
			r := ts.open(t, inMemory, nil)
			if s := r.Skills(); len(s) != 1 || s[0].Dir != "review" {
				t.Errorf("Skills = %v, want review alone", s)
			}
			sk := r.Skipped()
			if len(sk) != 1 || !strings.Contains(sk[0].Reason, c.want) {
				t.Errorf("Skipped = %v, want a reason with %q", sk, c.want)
			}
		})
	}
}

func TestDuplicateNames(t *testing.T) {
	a := reviewSkill()
	b := reviewSkill()
	a.path, b.path = "team-a/review", "team-b/review"
	ts := newTestServer(t, true, a, b)
	url, o := ts.connect(t, inMemory, nil)
	_, err := mcpsource.New(context.Background(), url, o)
	want := `mcp server test: skills "skill://team-a/review/SKILL.md" and "skill://team-b/review/SKILL.md" would share the folder "review"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestNoExtension(t *testing.T) {
	for _, tr := range transports {
		ts := newTestServer(t, false, reviewSkill())
		url, o := ts.connect(t, tr, nil)
		_, err := mcpsource.New(context.Background(), url, o)
		if !errors.Is(err, mcpsource.ErrNoExtension) || !strings.Contains(err.Error(), "does not declare the io.modelcontextprotocol/skills extension") {
			t.Errorf("%s: error %v, want ErrNoExtension", tr, err)
		}
		if ts.count("skills/list") != 0 {
			t.Errorf("%s: skills/list was requested", tr)
		}
	}
}

func TestCredentialsRedacted(t *testing.T) {
	const user, pass, token = "alice-user", "s3cret-pw", "t0ken-value"
	secrets := []string{user, pass, token, "frag-secret"}
	check := func(what, s string) {
		t.Helper()
		for _, x := range secrets {
			if strings.Contains(s, x) {
				t.Errorf("%s %q holds the secret %q", what, s, x)
			}
		}
	}
	ts := newTestServer(t, true, pdfSkill())
	ts.served[formsURI] = []byte("tampered, and longer than the listing says")
	ts.start()
	var gotAuth string
	var mu sync.Mutex
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return ts.srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		gotAuth = req.URL.Query().Get("token")
		mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	defer hs.Close()
	host := strings.TrimPrefix(hs.URL, "http://")
	raw := "http://" + user + ":" + pass + "@" + host + "/mcp?token=" + token + "#frag-secret"
	r, err := mcpsource.New(context.Background(), raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mu.Lock()
	if gotAuth != token {
		t.Errorf("the server got token %q; the URL must be used as given", gotAuth)
	}
	mu.Unlock()
	if want := "http://" + host + "/mcp"; r.Label() != want || r.Source().Label != want {
		t.Errorf("label %q, want %q", r.Label(), want)
	}
	_, err = fs.ReadFile(r.Source().FS, "pdf/references/forms.md")
	if !errors.Is(err, mcpsource.ErrVerify) {
		t.Fatalf("read: %v", err)
	}
	check("read error", err.Error())
	reg, err := registry.New(context.Background(), []source.Source{r.Source()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range reg.Snapshot().Summaries() {
		check("source", s.Source)
	}
	file, _ := reg.Snapshot().SkillFile("pdf")
	check("skill file", file)

	// A server that is gone: the connection error names it without
	// its credentials.
	hs.Close()
	_, err = mcpsource.New(context.Background(), raw, &mcpsource.Options{ListTimeout: 10 * time.Second})
	if err == nil {
		t.Fatal("New on a closed server: no error")
	}
	check("connection error", err.Error())
	if !strings.Contains(err.Error(), "mcp server http://"+host+"/mcp: connecting") {
		t.Errorf("connection error %q does not name the server", err)
	}
	// A URL that is not one.
	_, err = mcpsource.New(context.Background(), "ftp://"+user+":"+pass+"@host/x?token="+token, nil)
	if err == nil {
		t.Fatal("ftp URL: no error")
	}
	check("URL error", err.Error())
	_, err = mcpsource.New(context.Background(), "http://"+user+":"+pass+"@host:bad port/", nil)
	if err == nil {
		t.Fatal("bad URL: no error")
	}
	check("URL error", err.Error())
}

func TestAllowedToolsIgnored(t *testing.T) {
	cases := []struct{ name, md string }{
		{"block list", "---\nname: tools\ndescription: Uses tools.\nallowed-tools:\n  - Bash(git:*)\n  - Read\nmetadata:\n  owner: me\n---\nBody.\n"},
		{"flush list", "---\nname: tools\nallowed-tools:\n- Bash\n- Read\ndescription: Uses tools.\n---\nBody.\n"},
		{"inline", "---\nname: tools\ndescription: Uses tools.\nallowed-tools: Bash(git:*) Read\n---\nBody.\n"},
		{"quoted key, CRLF", "---\r\nname: tools\r\ndescription: Uses tools.\r\n\"allowed-tools\": Bash Read\r\n---\r\nBody.\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			ts := newTestServer(t, true, testSkill{path: "tools", files: map[string]string{"SKILL.md": c.md}})
			r := ts.open(t, inMemory, nil)
			data, err := fs.ReadFile(r.Source().FS, "tools/SKILL.md")
			if err != nil {
				t.Fatal(err)
			}
			if len(data) != len(c.md) {
				t.Errorf("served %d bytes, listed %d", len(data), len(c.md))
			}
			reg, err := registry.New(ctx, []source.Source{r.Source()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			snap := reg.Snapshot()
			front, ok := snap.Frontmatter("tools")
			if !ok {
				t.Fatalf("tools not in the registry: %v", snap.Diagnostics())
			}
			if len(front.AllowedTools) != 0 || front.Raw[skill.FieldAllowedTools] != nil {
				t.Errorf("allowed-tools kept: %v", front.AllowedTools)
			}
			if front.Description != "Uses tools." {
				t.Errorf("description %q", front.Description)
			}
			if body, err := snap.Body(ctx, "tools"); err != nil || body != "Body." {
				t.Errorf("Body = %q, %v", body, err)
			}
		})
	}
}

func TestDynamicSkill(t *testing.T) {
	ctx := context.Background()
	const uri = "skill://dyn/SKILL.md"
	ts := newTestServer(t, true, testSkill{path: "dyn", dynamic: true, files: map[string]string{
		"SKILL.md": "---\nname: dyn\ndescription: Dynamic.\n---\nBody.\n",
	}})
	r := ts.open(t, inMemory, nil)
	reg, err := registry.New(ctx, []source.Source{r.Source()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := reg.Snapshot().Body(ctx, "dyn"); err != nil || body != "Body." {
		t.Fatalf("Body = %q, %v", body, err)
	}
	// Its first read pinned it: other content is refused.
	ts.mu.Lock()
	ts.served[uri] = []byte("---\nname: dyn\ndescription: Dynamic.\n---\nOther.\n")
	ts.mu.Unlock()
	_, err = fs.ReadFile(r.Source().FS, "dyn/SKILL.md")
	if !errors.Is(err, mcpsource.ErrVerify) || !strings.Contains(err.Error(), uri+`" (dynamic) changed since it was first read`) {
		t.Errorf("error %v", err)
	}
}

func TestRelist(t *testing.T) {
	ctx := context.Background()
	ts := newTestServer(t, true, pdfSkill(), reviewSkill())
	r := ts.open(t, inMemory, nil)
	reg, err := registry.New(ctx, []source.Source{r.Source()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := reg.Snapshot()
	if _, err := old.Digests(ctx, "review"); err != nil {
		t.Fatal(err)
	}
	// An unchanged listing: the registry keeps its snapshot, and
	// nothing is read again.
	reads := ts.count("resources/read")
	if err := r.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if snap, err := reg.Refresh(ctx); err != nil || snap != old {
		t.Errorf("Refresh after an unchanged Relist: new snapshot %v, %v", snap != old, err)
	}
	if n := ts.count("resources/read"); n != reads {
		t.Errorf("%d reads after an unchanged Relist and Refresh; want none", n-reads)
	}
	// The server changes review's SKILL.md and its listing.
	md := []byte("---\nname: review\ndescription: Review a change.\n---\nRead it.\n")
	const uri = "skill://review/SKILL.md"
	ts.mu.Lock()
	ts.served[uri] = md
	e := ts.entries[1]
	e["frontmatter"].(map[string]any)["description"] = "Review a change."
	for _, x := range e["resources"].([]any) {
		if x := x.(map[string]any); x["uri"] == uri {
			x["digest"], x["size"] = digest(md), len(md)
		}
	}
	ts.mu.Unlock()
	if err := r.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := reg.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := snap.Lookup("review"); s.Description != "Review a change." {
		t.Errorf("description after Relist and Refresh: %q", s.Description)
	}
	if body, err := snap.Body(ctx, "review"); err != nil || body != "Read it." {
		t.Errorf("Body = %q, %v", body, err)
	}
	// The old snapshot's skill is gone from the server: its read fails
	// rather than mixing old and new.
	if _, err := old.Body(ctx, "review"); err == nil {
		t.Error("old snapshot read the changed SKILL.md")
	}
	if n := ts.count("skills/list"); n != 3 {
		t.Errorf("skills/list requests = %d, want 3", n)
	}
}

func TestClose(t *testing.T) {
	ts := newTestServer(t, true, reviewSkill())
	r := ts.open(t, inMemory, nil)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	_, err := fs.ReadFile(r.Source().FS, "review/SKILL.md")
	if !errors.Is(err, mcpsource.ErrClosed) {
		t.Errorf("read after Close: %v", err)
	}
	if err := r.Relist(context.Background()); !errors.Is(err, mcpsource.ErrClosed) {
		t.Errorf("Relist after Close: %v", err)
	}
}

func TestOptions(t *testing.T) {
	cases := []struct {
		url  string
		opts mcpsource.Options
		want string
	}{
		{"", mcpsource.Options{}, "no server URL and no Options.Transport"},
		{"http://h/", mcpsource.Options{MaxPages: -1}, "Options.MaxPages is -1"},
		{"http://h/", mcpsource.Options{MaxListBytes: -1}, "Options.MaxListBytes is -1"},
		{"http://h/", mcpsource.Options{ListTimeout: -1}, "Options.ListTimeout is -1ns"},
		{"http://h/", mcpsource.Options{ReadTimeout: -1}, "Options.ReadTimeout is -1ns"},
		{"http://h/", mcpsource.Options{MaxFiles: -1}, "Options.MaxFiles is -1"},
		{"http://h/", mcpsource.Options{MaxBytes: -1}, "Options.MaxBytes is -1"},
		{"file:///tmp/x", mcpsource.Options{}, "is not an http or https URL with a host"},
	}
	for _, c := range cases {
		_, err := mcpsource.New(context.Background(), c.url, &c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %+v): %v, want %q", c.url, c.opts, err, c.want)
		}
	}
}

// The file system answers listings and Stat from the listing: nothing
// is read until a file is opened.
func TestFSWithoutReads(t *testing.T) {
	ts := newTestServer(t, true, pdfSkill(), reviewSkill())
	r := ts.open(t, inMemory, nil)
	fsys := r.Source().FS
	var walked []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !d.IsDir() {
			st, err := fs.Stat(fsys, p)
			if err != nil || st.Size() != info.Size() || !st.ModTime().Equal(info.ModTime()) {
				t.Errorf("Stat(%s) = %v, %v", p, st, err)
			}
		}
		walked = append(walked, fmt.Sprintf("%s %d", p, info.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{". 0", "pdf 0", "pdf/SKILL.md 160", "pdf/references 0", "pdf/references/forms.md 21", "pdf/scripts 0", "pdf/scripts/fill.py 14", "review 0", "review/SKILL.md 72", "review/checklist.md 8"}
	if !slices.Equal(walked, want) {
		t.Errorf("walk = %q\nwant %q", walked, want)
	}
	sub, err := fs.Sub(fsys, "pdf")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := fs.Stat(sub, "scripts/fill.py"); err != nil || st.Size() != 14 {
		t.Errorf("Stat through Sub = %v, %v", st, err)
	}
	if n := ts.count("resources/read"); n != 0 {
		t.Errorf("%d files read by listing and Stat; want none", n)
	}
	if _, err := fs.Stat(fsys, "pdf/missing.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a missing file: %v", err)
	}
	if _, err := fsys.Open("../x"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Open(../x): %v", err)
	}
}

// A page that is not a complete result is refused.
func TestIncompleteResult(t *testing.T) {
	ts := newTestServer(t, true, reviewSkill())
	ts.edit = func(_ int, res *testListResult) { res.ResultType = "input_required" }
	url, o := ts.connect(t, inMemory, nil)
	_, err := mcpsource.New(context.Background(), url, o)
	if want := `mcp server test: skills/list (page 1) answered with resultType "input_required"; skillkit takes only complete results`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// A server that does not answer fails the listing or the read when its
// timeout ends, with an error naming the server (and the file).
func TestTimeouts(t *testing.T) {
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			ts := newTestServer(t, true, reviewSkill())
			ts.hang["skills/list"] = true
			url, o := ts.connect(t, tr, &mcpsource.Options{ListTimeout: 100 * time.Millisecond})
			_, err := mcpsource.New(context.Background(), url, o)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "skills/list (page 1)") || !strings.Contains(err.Error(), "Options.ListTimeout, 100ms") {
				t.Errorf("listing: error %v, want a deadline naming skills/list and the timeout", err)
			}

			ts = newTestServer(t, true, reviewSkill())
			ts.hang["skill://review/checklist.md"] = true
			r := ts.open(t, tr, &mcpsource.Options{ReadTimeout: 100 * time.Millisecond})
			_, err = fs.ReadFile(r.Source().FS, "review/checklist.md")
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `mcp server `+r.Label()+`: reading "skill://review/checklist.md"`) {
				t.Errorf("read: error %v, want a deadline naming the server and the file", err)
			}
			// Other files are still served.
			if _, err := fs.ReadFile(r.Source().FS, "review/SKILL.md"); err != nil {
				t.Errorf("read after a timeout: %v", err)
			}
		})
	}
}

// TestOversizedResponse answers a read with far more than the listing
// says: the host stops reading at its response bound rather than holding
// whatever the server sends.
func TestOversizedResponse(t *testing.T) {
	ts := newTestServer(t, true, pdfSkill())
	ts.served[formsURI] = bytes.Repeat([]byte("x"), 8<<20)
	r := ts.open(t, httpT, &mcpsource.Options{MaxListBytes: 64 << 10, MaxBytes: 64 << 10})
	_, err := fs.ReadFile(r.Source().FS, "pdf/references/forms.md")
	// The SDK reports the cut response as a request without response;
	// a size mismatch would mean the whole answer was read first.
	if err == nil || !strings.Contains(err.Error(), formsURI) || strings.Contains(err.Error(), "the listing says") {
		t.Fatalf("an 8 MiB answer for a listed 30-byte file: %v", err)
	}
}

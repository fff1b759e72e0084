package loadstate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillkit/skillkit/session"
)

func TestKeys(t *testing.T) {
	tests := []struct{ got, want string }{
		{LoadedKey("main", "pdf"), "temp:skill:loaded_by_agent:main/pdf"},
		{DocsKey("main", "pdf"), "temp:skill:docs_by_agent:main/pdf"},
		{LoadedOrderKey("main"), "temp:skill:loaded_order_by_agent:main"},
		{LoadedPrefix("sub"), "temp:skill:loaded_by_agent:sub/"},
		{DocsPrefix("sub"), "temp:skill:docs_by_agent:sub/"},
		{legacyLoadedKey("pdf"), "temp:skill:loaded:pdf"},
		{legacyDocsKey("pdf"), "temp:skill:docs:pdf"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
		if !strings.HasPrefix(tt.got, Prefix) {
			t.Errorf("%q lacks %q", tt.got, Prefix)
		}
	}
}

func TestLoadedSkills(t *testing.T) {
	state := map[string]string{
		LoadedKey("main", "pdf"):  "1",
		LoadedKey("main", "xlsx"): "1",
		LoadedKey("main", "off"):  "",   // empty value: not loaded
		LoadedKey("main", " "):    "1",  // blank name
		LoadedKey("main/b", "c"):  "1",  // agent "main/b", not main's "b/c"
		LoadedKey("other", "doc"): "1",  // another agent
		legacyLoadedKey("old"):    "1",  // legacy: needs migration first
		DocsKey("main", "pdf"):    "*",  // docs, not loads
		LoadedOrderKey("main"):    "[]", // order, not a load
	}
	tests := []struct {
		agent string
		want  []string
	}{
		{"main", []string{"pdf", "xlsx"}},
		{"main/b", []string{"c"}},
		{"other", []string{"doc"}},
		{"nobody", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, loadedSkills(state, tt.agent)); diff != "" {
			t.Errorf("loadedSkills(%q) (-want +got):\n%s", tt.agent, diff)
		}
	}
}

func TestDocsEncoding(t *testing.T) {
	tests := []struct {
		all     bool
		docs    []string
		encoded string
	}{
		{true, nil, "*"},
		{true, []string{"ignored.md"}, "*"},
		{false, nil, "[]"},
		{false, []string{"a.md", "ref/b.md"}, `["a.md","ref/b.md"]`},
	}
	for _, tt := range tests {
		got := encodeDocs(tt.all, tt.docs)
		if got != tt.encoded {
			t.Errorf("encodeDocs(%v, %q) = %q, want %q", tt.all, tt.docs, got, tt.encoded)
		}
		all, docs, err := decodeDocs("k", got)
		wantDocs := tt.docs
		if tt.all {
			wantDocs = nil
		} else if wantDocs == nil {
			wantDocs = []string{}
		}
		if err != nil || all != tt.all || !cmp.Equal(wantDocs, docs) {
			t.Errorf("decodeDocs(%q) = %v, %q, %v", got, all, docs, err)
		}
	}
	for _, bad := range []string{"", "**", "{}", `["a",1]`, "pdf"} {
		if _, _, err := decodeDocs("temp:skill:docs_by_agent:a/b", bad); err == nil || !strings.Contains(err.Error(), "temp:skill:docs_by_agent:a/b") {
			t.Errorf("decodeDocs(%q) error = %v, want one naming the key", bad, err)
		}
	}
}

func TestLoadedOrder(t *testing.T) {
	tests := []struct {
		value   *string
		want    []string
		wantErr bool
	}{
		{nil, nil, false},
		{session.Ptr(""), nil, false},
		{session.Ptr(`["a","b"]`), []string{"a", "b"}, false},
		{session.Ptr(`nope`), nil, true},
	}
	for _, tt := range tests {
		state := map[string]string{}
		if tt.value != nil {
			state[LoadedOrderKey("m")] = *tt.value
		}
		got, err := loadedOrder(state, "m")
		if (err != nil) != tt.wantErr || !cmp.Equal(tt.want, got) {
			t.Errorf("loadedOrder(%v) = %q, %v", tt.value, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), LoadedOrderKey("m")) {
			t.Errorf("error %v does not name the key", err)
		}
	}
}

func TestMigrate(t *testing.T) {
	del := (*string)(nil)
	tests := []struct {
		name    string
		state   map[string]string
		want    map[string]*string
		wantErr bool
	}{
		{"nothing to migrate", map[string]string{LoadedKey("m", "a"): "1", "other": "x"}, nil, false},
		{"loaded and docs move, order gets names", map[string]string{
			legacyLoadedKey("pdf"): "1", legacyDocsKey("pdf"): `["a.md"]`,
			legacyLoadedKey("csv"): "1",
		}, map[string]*string{
			legacyLoadedKey("pdf"): del, legacyDocsKey("pdf"): del, legacyLoadedKey("csv"): del,
			LoadedKey("m", "pdf"): session.Ptr("1"), DocsKey("m", "pdf"): session.Ptr(`["a.md"]`),
			LoadedKey("m", "csv"): session.Ptr("1"),
			LoadedOrderKey("m"):   session.Ptr(`["csv","pdf"]`),
		}, false},
		{"per-agent keys win, legacy names go first in order", map[string]string{
			legacyLoadedKey("pdf"): "1", legacyDocsKey("pdf"): "*",
			LoadedKey("m", "pdf"): "1", DocsKey("m", "pdf"): `["keep.md"]`,
			legacyLoadedKey("old"): "1", LoadedKey("m", "new"): "1",
			LoadedOrderKey("m"): `["pdf","new"]`,
		}, map[string]*string{
			legacyLoadedKey("pdf"): del, legacyDocsKey("pdf"): del, legacyLoadedKey("old"): del,
			LoadedKey("m", "old"): session.Ptr("1"),
			LoadedOrderKey("m"):   session.Ptr(`["old","pdf","new"]`),
		}, false},
		{"empty legacy load is only deleted; slash names left alone", map[string]string{
			legacyLoadedKey("off"): "", legacyLoadedKey("a/b"): "1",
		}, map[string]*string{legacyLoadedKey("off"): del}, false},
		{"corrupt order", map[string]string{legacyLoadedKey("x"): "1", LoadedOrderKey("m"): "{"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Migrate(tt.state, "m")
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("delta (-want +got):\n%s", diff)
			}
			if got == nil {
				return
			}
			// Applying the delta leaves nothing to migrate.
			after := map[string]string{}
			for k, v := range tt.state {
				after[k] = v
			}
			session.ApplyDelta(after, got)
			if again, err := Migrate(after, "m"); err != nil || again != nil {
				t.Fatalf("second migration = %v, %v; want nothing", again, err)
			}
		})
	}
}

func FuzzDecodeDocs(f *testing.F) {
	for _, s := range []string{"*", "[]", `["a.md"]`, "", "{", `[1]`, `["\u00e9"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		all, docs, err := decodeDocs("k", v)
		if err != nil {
			return
		}
		if all {
			if v != DocsAll {
				t.Fatalf("%q decoded as all", v)
			}
			return
		}
		// What decodes must survive a round trip.
		enc := encodeDocs(false, docs)
		_, again, err := decodeDocs("k", enc)
		if err != nil || (len(docs) != 0 || len(again) != 0) && !cmp.Equal(docs, again) {
			t.Fatalf("round trip of %q: %q -> %q -> %q, %v", v, docs, enc, again, err)
		}
		if !json.Valid([]byte(enc)) {
			t.Fatalf("EncodeDocs produced invalid JSON %q", enc)
		}
	})
}

package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillkit/skillkit/registry"
)

// alphaDocs is the document list of the fixture's alpha skill, as the
// error texts print it.
const alphaDocs = "data/empty.txt, data/nul.txt, notes.txt, references/api.md, references/guide.md"

// alphaDocList is alphaDocs as a list: what include_all_docs selects.
var alphaDocList = strings.Split(alphaDocs, ", ")

// callCase is one call of a tool and what it must return.
type callCase struct {
	name    string
	snap    *registry.Snapshot // nil means the fixture's snapshot
	noSnap  bool               // call with a nil snapshot
	state   State
	args    string
	want    string
	wantErr bool
	effects []Effect
}

func runCases(t *testing.T, f fixture, tool Tool, tests []callCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := tt.snap
			if snap == nil && !tt.noSnap {
				snap = f.snap
			}
			got := run(t, tool, Call{Args: json.RawMessage(tt.args), Skills: snap, State: tt.state})
			if got.Text != tt.want {
				t.Errorf("text:\n got %q\nwant %q", got.Text, tt.want)
			}
			if got.IsError != tt.wantErr {
				t.Errorf("IsError = %v, want %v", got.IsError, tt.wantErr)
			}
			if diff := cmp.Diff(tt.effects, got.Effects); diff != "" {
				t.Errorf("effects (-want +got):\n%s", diff)
			}
		})
	}
}

// skillArgCases are the skill-argument checks every tool but skill shares,
// in the skill tool's order.
func skillArgCases(f fixture, tool string, extra string) []callCase {
	return []callCase{
		{name: "invalid name", args: `{"skill":"Alpha"` + extra + `}`, want: `Error: invalid skill name "Alpha"`, wantErr: true},
		{name: "missing skill", args: `{}`, want: `Error: invalid skill name ""`, wantErr: true},
		{name: "unknown", args: `{"skill":"zeta"` + extra + `}`, want: `Error: skill "zeta" is unknown or no longer available`, wantErr: true},
		{name: "nil snapshot", noSnap: true, args: `{"skill":"alpha"` + extra + `}`, want: `Error: skill "alpha" is unknown or no longer available`, wantErr: true},
		{name: "filtered out", snap: f.without("alpha"), args: `{"skill":"alpha"` + extra + `}`, want: `Error: skill "alpha" is unknown or no longer available`, wantErr: true},
		{name: "not model invocable", args: `{"skill":"hidden"` + extra + `}`, want: `Error: skill "hidden" is not available for model invocation`, wantErr: true},
		{name: "malformed JSON", args: `{"skill":"alpha"`,
			want: "Error: invalid arguments to " + tool + ": unexpected EOF; send one JSON object that matches the tool's schema", wantErr: true},
		{name: "unknown property", args: `{"skill":"alpha","name":"alpha"}`,
			want: "Error: invalid arguments to " + tool + ": json: unknown field \"name\"; send one JSON object that matches the tool's schema", wantErr: true},
		{name: "skill not a string", args: `{"skill":["alpha"]}`,
			want: fmt.Sprintf("Error: invalid arguments to %s: \"skill\" is an array, not a string; send one JSON object that matches the tool's schema", tool), wantErr: true},
	}
}

func argsTypeName(tool string) string {
	switch tool {
	case LoadName:
		return "LoadArgs"
	case SelectDocsName:
		return "SelectDocsArgs"
	case ListDocsName:
		return "SkillArg"
	}
	return "ReadArgs"
}

func TestLoad(t *testing.T) {
	f := newFixture(t)
	load := func(docs []string, all bool) []Effect {
		mode := DocsKeep
		if all || docs != nil {
			mode = DocsReplace
		}
		return []Effect{{Kind: EffectLoad, Skill: "alpha", DocsMode: mode, Docs: docs, AllDocs: all}}
	}
	tests := []callCase{
		{name: "plain", args: `{"skill":"alpha"}`, want: "loaded: alpha", effects: load(nil, false)},
		{name: "skill without documents", args: `{"skill":"nodocs"}`, want: "loaded: nodocs",
			effects: []Effect{{Kind: EffectLoad, Skill: "nodocs", DocsMode: DocsKeep}}},
		{name: "empty docs keep the selection", args: `{"skill":"alpha","docs":[]}`, want: "loaded: alpha", effects: load(nil, false)},
		{name: "null docs keep the selection", args: `{"skill":"alpha","docs":null}`, want: "loaded: alpha", effects: load(nil, false)},
		{name: "docs sorted and deduplicated", args: `{"skill":"alpha","docs":["references/guide.md","notes.txt","references/guide.md"]}`,
			want: "loaded: alpha", effects: load([]string{"notes.txt", "references/guide.md"}, false)},
		{name: "include all", args: `{"skill":"alpha","include_all_docs":true}`, want: "loaded: alpha", effects: load(alphaDocList, true)},
		{name: "include all false with docs", args: `{"skill":"alpha","include_all_docs":false,"docs":["notes.txt"]}`,
			want: "loaded: alpha", effects: load([]string{"notes.txt"}, false)},
		{name: "docs and include all", args: `{"skill":"alpha","docs":["notes.txt"],"include_all_docs":true}`,
			want: "Error: pass either docs or include_all_docs to skill_load, not both", wantErr: true},
		{name: "unknown docs listed sorted once with the valid ones", args: `{"skill":"alpha","docs":["z.md","notes.txt","SKILL.md","z.md"]}`,
			want: `Error: unknown documents for skill "alpha": "SKILL.md", "z.md". Valid documents: ` + alphaDocs + ` (SKILL.md is the skill's instructions, always loaded, not a document)`, wantErr: true},
		{name: "paths are cleaned", args: `{"skill":"alpha","docs":["./notes.txt","references//api.md","references/../notes.txt"]}`,
			want: "loaded: alpha", effects: load([]string{"notes.txt", "references/api.md"}, false)},
		{name: "empty path", args: `{"skill":"alpha","docs":["notes.txt",""]}`,
			want: `Error: document of skill "alpha": invalid path: the path is empty; pass a path relative to the skill folder, such as references/api.md`, wantErr: true},
		{name: "path outside the skill", args: `{"skill":"alpha","docs":["../nodocs/SKILL.md"]}`,
			want: `Error: document of skill "alpha": invalid path "../nodocs/SKILL.md": it leads outside the skill folder; pass a path relative to the skill folder, such as references/api.md`, wantErr: true},
		{name: "escaping link is not a document", args: `{"skill":"alpha","docs":["references/escape.md"]}`,
			want: `Error: unknown documents for skill "alpha": "references/escape.md". Valid documents: ` + alphaDocs, wantErr: true},
		{name: "non-document file", args: `{"skill":"alpha","docs":["scripts/run.sh"]}`,
			want: `Error: unknown documents for skill "alpha": "scripts/run.sh". Valid documents: ` + alphaDocs, wantErr: true},
		{name: "skill without documents", args: `{"skill":"nodocs","docs":["a.md"]}`,
			want: `Error: skill "nodocs" has no documents; unknown: "a.md"`, wantErr: true},
		{name: "provider error", args: `{"skill":"broken"}`, want: "Error: " + providerMessage(t, f.snap, "broken", "broken"), wantErr: true},
		{name: "provider error with docs", args: `{"skill":"gone","docs":["a.md"]}`, want: "Error: " + providerMessage(t, f.snap, "gone", "gone"), wantErr: true},
		{name: "include_all_docs not a boolean", args: `{"skill":"alpha","include_all_docs":"yes"}`,
			want: "Error: invalid arguments to skill_load: \"include_all_docs\" is a string, not a boolean; send one JSON object that matches the tool's schema", wantErr: true},
	}
	runCases(t, f, Load(), append(tests, skillArgCases(f, LoadName, `,"docs":["notes.txt"]`)...))
}

func TestSelectDocs(t *testing.T) {
	f := newFixture(t)
	sel := func(mode DocsMode, docs []string, all bool) []Effect {
		return []Effect{{Kind: EffectSelectDocs, Skill: "alpha", DocsMode: mode, Docs: docs, AllDocs: all}}
	}
	loaded := state{"alpha": {"notes.txt"}}
	tests := []callCase{
		{name: "replace", state: loaded, args: `{"skill":"alpha","mode":"replace","docs":["references/guide.md","references/api.md"]}`,
			want:    "selected documents of alpha (replace): references/api.md, references/guide.md",
			effects: sel(DocsReplace, []string{"references/api.md", "references/guide.md"}, false)},
		{name: "default mode is replace", args: `{"skill":"alpha","docs":["notes.txt"]}`,
			want: "selected documents of alpha (replace): notes.txt", effects: sel(DocsReplace, []string{"notes.txt"}, false)},
		{name: "unknown mode", args: `{"skill":"alpha","mode":"merge","docs":["notes.txt"]}`,
			want: `Error: mode "merge" of skill_select_docs is not one of "add", "replace", "clear"; omit it for "replace"`, wantErr: true},
		{name: "mode is case sensitive", args: `{"skill":"alpha","mode":"ADD","docs":["notes.txt"]}`,
			want: `Error: mode "ADD" of skill_select_docs is not one of "add", "replace", "clear"; omit it for "replace"`, wantErr: true},
		{name: "replace with nothing", args: `{"skill":"alpha","mode":"replace"}`,
			want: "selected documents of alpha (replace): none", effects: sel(DocsReplace, []string{}, false)},
		{name: "add deduplicated and sorted", state: loaded, args: `{"skill":"alpha","mode":"add","docs":["references/guide.md","notes.txt","notes.txt"]}`,
			want: "selected documents of alpha (add): notes.txt, references/guide.md", effects: sel(DocsAdd, []string{"notes.txt", "references/guide.md"}, false)},
		{name: "add nothing", args: `{"skill":"alpha","mode":"add","docs":[]}`,
			want: "selected documents of alpha (add): none", effects: sel(DocsAdd, []string{}, false)},
		{name: "clear", state: loaded, args: `{"skill":"alpha","mode":"clear"}`,
			want: "cleared documents of alpha", effects: sel(DocsClear, nil, false)},
		{name: "clear with docs", args: `{"skill":"alpha","mode":"clear","docs":["notes.txt"]}`,
			want: `Error: mode "clear" of skill_select_docs takes no docs or include_all_docs; to change the selection use mode "replace" or "add"`, wantErr: true},
		{name: "clear with include all", args: `{"skill":"alpha","mode":"clear","include_all_docs":true}`,
			want: `Error: mode "clear" of skill_select_docs takes no docs or include_all_docs; to change the selection use mode "replace" or "add"`, wantErr: true},
		{name: "include all", args: `{"skill":"alpha","include_all_docs":true}`,
			want: "selected all documents of alpha", effects: sel(DocsReplace, alphaDocList, true)},
		{name: "include all with add", args: `{"skill":"alpha","mode":"add","include_all_docs":true}`,
			want: "selected all documents of alpha", effects: sel(DocsReplace, alphaDocList, true)},
		{name: "docs and include all", args: `{"skill":"alpha","docs":["notes.txt"],"include_all_docs":true}`,
			want: "Error: pass either docs or include_all_docs to skill_select_docs, not both", wantErr: true},
		{name: "unknown docs", args: `{"skill":"alpha","mode":"add","docs":["b.md","a.md","notes.txt"]}`,
			want: `Error: unknown documents for skill "alpha": "a.md", "b.md". Valid documents: ` + alphaDocs, wantErr: true},
		{name: "skill without documents", args: `{"skill":"nodocs","docs":["a.md"]}`,
			want: `Error: skill "nodocs" has no documents; unknown: "a.md"`, wantErr: true},
		{name: "mode not a string", args: `{"skill":"alpha","mode":1}`,
			want: "Error: invalid arguments to skill_select_docs: \"mode\" is a number, not a string; send one JSON object that matches the tool's schema", wantErr: true},
	}
	runCases(t, f, SelectDocs(), append(tests, skillArgCases(f, SelectDocsName, `,"mode":"clear"`)...))
}

func TestListDocs(t *testing.T) {
	f := newFixture(t)
	tests := []callCase{
		{name: "documents in byte order", args: `{"skill":"alpha"}`,
			want: `["data/empty.txt","data/nul.txt","notes.txt","references/api.md","references/guide.md"]`},
		{name: "no documents", args: `{"skill":"nodocs"}`, want: `[]`},
		{name: "listing needs no loaded skill or body", args: `{"skill":"gone"}`, want: `[]`},
	}
	runCases(t, f, ListDocs(), append(tests, skillArgCases(f, ListDocsName, "")...))
}

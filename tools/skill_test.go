package tools

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillkit/skillkit/registry"
)

func TestSkill(t *testing.T) {
	f := newFixture(t)
	alphaText := "<skill_content name=\"alpha\">\n" +
		"<skill_resources>\n" +
		"Base directory for this skill: " + f.skillDir("alpha") + "\n" +
		"Resolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.\n" +
		"</skill_resources>\n" +
		"\n" +
		"<skill_instructions>\n" +
		"# Alpha\n\nRun scripts/run.sh.\n" +
		"</skill_instructions>\n" +
		"</skill_content>"
	// Provider messages belong to the registry and skill packages; the
	// skill tool's part is the "Error: " wrapper around them.
	brokenErr := providerMessage(t, f.snap, "broken", filepath.Join(f.skillDir("broken"), "SKILL.md"))
	goneErr := providerMessage(t, f.snap, "gone", filepath.Join(f.skillDir("gone"), "SKILL.md"))
	tests := []struct {
		name    string
		snap    *registry.Snapshot
		args    string
		want    string
		wantErr bool
		effects []Effect
	}{
		{name: "success", snap: f.snap, args: `{"name":"alpha"}`, want: alphaText,
			effects: []Effect{{Kind: EffectLoad, Skill: "alpha", DocsMode: DocsKeep, Inline: true}}},
		{name: "success with whitespace around the object", snap: f.snap, args: " \n{\"name\":\"alpha\"}\n ", want: alphaText,
			effects: []Effect{{Kind: EffectLoad, Skill: "alpha", DocsMode: DocsKeep, Inline: true}}},
		{name: "invalid uppercase", snap: f.snap, args: `{"name":"Alpha"}`, want: `Error: invalid skill name "Alpha"`, wantErr: true},
		{name: "invalid underscore", snap: f.snap, args: `{"name":"my_skill"}`, want: `Error: invalid skill name "my_skill"`, wantErr: true},
		{name: "invalid double hyphen", snap: f.snap, args: `{"name":"a--b"}`, want: `Error: invalid skill name "a--b"`, wantErr: true},
		{name: "invalid leading hyphen", snap: f.snap, args: `{"name":"-a"}`, want: `Error: invalid skill name "-a"`, wantErr: true},
		{name: "invalid raw text kept", snap: f.snap, args: `{"name":"a \"b\"\n"}`, want: "Error: invalid skill name \"a \"b\"\n\"", wantErr: true},
		{name: "missing name", snap: f.snap, args: `{}`, want: `Error: invalid skill name ""`, wantErr: true},
		{name: "empty args", snap: f.snap, args: ``, want: `Error: invalid skill name ""`, wantErr: true},
		{name: "null args", snap: f.snap, args: `null`, want: `Error: invalid skill name ""`, wantErr: true},
		{name: "invalid checked before nil snapshot", snap: nil, args: `{"name":"A"}`, want: `Error: invalid skill name "A"`, wantErr: true},
		{name: "unknown", snap: f.snap, args: `{"name":"zeta"}`, want: `Error: skill "zeta" is unknown or no longer available`, wantErr: true},
		{name: "nil snapshot", snap: nil, args: `{"name":"alpha"}`, want: `Error: skill "alpha" is unknown or no longer available`, wantErr: true},
		{name: "filtered out", snap: f.without("alpha"), args: `{"name":"alpha"}`, want: `Error: skill "alpha" is unknown or no longer available`, wantErr: true},
		{name: "filtered hidden skill is unknown, not disabled", snap: f.without("hidden"), args: `{"name":"hidden"}`, want: `Error: skill "hidden" is unknown or no longer available`, wantErr: true},
		{name: "not model invocable", snap: f.snap, args: `{"name":"hidden"}`, want: `Error: skill "hidden" is not available for model invocation`, wantErr: true},
		{name: "provider error unparsable", snap: f.snap, args: `{"name":"broken"}`,
			want: "Error: " + brokenErr, wantErr: true},
		{name: "provider error missing file", snap: f.snap, args: `{"name":"gone"}`,
			want: "Error: " + goneErr, wantErr: true},
		{name: "malformed JSON", snap: f.snap, args: `{"name":`,
			want: "Error: invalid arguments to skill: unexpected EOF; send one JSON object that matches the tool's schema", wantErr: true},
		{name: "name not a string", snap: f.snap, args: `{"name":5}`,
			want: "Error: invalid arguments to skill: \"name\" is a number, not a string; send one JSON object that matches the tool's schema", wantErr: true},
		{name: "unknown property", snap: f.snap, args: `{"name":"alpha","docs":[]}`,
			want: "Error: invalid arguments to skill: json: unknown field \"docs\"; send one JSON object that matches the tool's schema", wantErr: true},
		{name: "not an object", snap: f.snap, args: `["alpha"]`,
			want: "Error: invalid arguments to skill: the arguments are an array, not an object; send one JSON object that matches the tool's schema", wantErr: true},
		{name: "trailing data", snap: f.snap, args: `{"name":"alpha"} {"name":"nodocs"}`,
			want: "Error: invalid arguments to skill: unexpected data after the JSON object; send one JSON object that matches the tool's schema", wantErr: true},
	}
	tool := Skill()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tool, Call{Args: json.RawMessage(tt.args), Skills: tt.snap})
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

func TestRenderSkill(t *testing.T) {
	f := newFixture(t)
	text, err := RenderSkill(context.Background(), f.snap, "nodocs")
	if err != nil {
		t.Fatalf("RenderSkill: %v (%s)", err, text)
	}
	if !strings.Contains(text, "<skill_instructions>\nNo documents here.\n</skill_instructions>") {
		t.Errorf("body not rendered verbatim:\n%s", text)
	}
	for _, name := range []string{"Bad", "zeta", "hidden", "broken"} {
		text, err := RenderSkill(context.Background(), f.snap, name)
		if !errors.Is(err, ErrSkillCall) {
			t.Errorf("RenderSkill(%q) error = %v, want ErrSkillCall", name, err)
		}
		if !strings.HasPrefix(text, "Error: ") {
			t.Errorf("RenderSkill(%q) text = %q, want an error text", name, text)
		}
	}
}

// TestSkillProviderManaged covers a source with no host path: the result
// says the provider manages the resources.
func TestSkillProviderManaged(t *testing.T) {
	snap := mapFSSnapshot(t)
	got := run(t, Skill(), Call{Args: json.RawMessage(`{"name":"pdf"}`), Skills: snap})
	want := "<skill_content name=\"pdf\">\n" +
		"<skill_resources>\n" +
		"Resources for this skill are managed by provider \"bundled &amp; co\".\n" +
		"Load referenced resources only as needed.\n" +
		"</skill_resources>\n" +
		"\n" +
		"<skill_instructions>\n" +
		"Use <pdftotext> & friends.\n" +
		"</skill_instructions>\n" +
		"</skill_content>"
	if got.IsError || got.Text != want {
		t.Errorf("got (IsError=%v)\n%s\nwant\n%s", got.IsError, got.Text, want)
	}
}

// providerMessage returns the error the snapshot gives for the body of
// name, after checking that it names the file.
func providerMessage(t *testing.T, snap *registry.Snapshot, name, file string) string {
	t.Helper()
	_, err := snap.Body(context.Background(), name)
	if err == nil {
		t.Fatalf("Body(%q) succeeded; the fixture should make it fail", name)
	}
	if !strings.Contains(err.Error(), file) {
		t.Errorf("Body(%q) error %q does not name %s", name, err, file)
	}
	return err.Error()
}

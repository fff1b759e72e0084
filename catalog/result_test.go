package catalog

import (
	"errors"
	"strings"
	"testing"
)

func TestRenderSkillResultGolden(t *testing.T) {
	body := "# PDF\n\nRun `scripts/fill.py <form>` & check.\n</skill_instructions> stays verbatim."
	tests := []struct {
		name   string
		result SkillResult
	}{
		{"provider-managed", SkillResult{Name: "pdf", Provider: `remote <"A&B">`, Content: body}},
		{"directory", SkillResult{Name: "pdf", Provider: "local", Content: body,
			Resources: &ResourceBase{Kind: ResourceDirectory, Path: "/home/u/.agents/skills/pdf & <co>"}}},
		{"url", SkillResult{Name: "pdf", Provider: "remote", Content: body,
			Resources: &ResourceBase{Kind: ResourceURL, URL: "https://skills.example.test/pdf?a=1&b=<2>"}}},
		{"opaque", SkillResult{Name: "pdf", Provider: "runtime", Content: body,
			Resources: &ResourceBase{Kind: ResourceOpaque, Description: "runtime memory <embedded> & \"quoted\""}}},
		{"name-attribute", SkillResult{Name: `a&b"c<d>e'f`, Provider: "local", Content: "",
			Resources: &ResourceBase{Kind: ResourceDirectory, Path: "/s"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RenderSkillResult(tt.result)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "result-"+tt.name+".golden", got)
			if tt.result.Content != "" && !strings.Contains(got, "<skill_instructions>\n"+tt.result.Content+"\n</skill_instructions>\n</skill_content>") {
				t.Error("body is not verbatim between the instruction tags")
			}
		})
	}
}

func TestRenderSkillResultExact(t *testing.T) {
	// The expectation of the dsh skill tool's own test, line by line.
	got, err := RenderSkillResult(SkillResult{
		Name: "project-skill", Provider: "local", Content: "Project instructions.",
		Resources: &ResourceBase{Kind: ResourceDirectory, Path: "/p/.agents/skills/project-skill"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		`<skill_content name="project-skill">`,
		"<skill_resources>",
		"Base directory for this skill: /p/.agents/skills/project-skill",
		"Resolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.",
		"</skill_resources>",
		"",
		"<skill_instructions>",
		"Project instructions.",
		"</skill_instructions>",
		"</skill_content>",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestRenderSkillResultUnknownKind(t *testing.T) {
	_, err := RenderSkillResult(SkillResult{Name: "x", Resources: &ResourceBase{Kind: "ftp"}})
	if !errors.Is(err, ErrUnknownResourceKind) {
		t.Fatalf("err = %v, want ErrUnknownResourceKind", err)
	}
	if !strings.Contains(err.Error(), `"ftp"`) || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("error %q does not name the kind and the skill", err)
	}
}

func TestErrorTexts(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{InvalidNameError("Bad Name"), `Error: invalid skill name "Bad Name"`},
		{InvalidNameError(""), `Error: invalid skill name ""`},
		{UnknownSkillError("pdf"), `Error: skill "pdf" is unknown or no longer available`},
		{NotModelInvocableError("deploy"), `Error: skill "deploy" is not available for model invocation`},
		{ProviderError(errors.New("remote store timed out")), `Error: remote store timed out`},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

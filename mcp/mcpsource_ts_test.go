package mcp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/source/mcpsource"
)

// TestMCPSourceAgainstReferenceServer consumes the skills of the
// TypeScript SDK's reference skills server with skillkit's host side
// (source/mcpsource): genuine content is read, and each way the server
// can lie about a file (digest, size, front matter, a file outside the
// listing) is refused with a verification error naming the file.
func TestMCPSourceAgainstReferenceServer(t *testing.T) {
	env := needNPM(t)
	for _, tc := range []struct {
		mode, file string
		refused    bool
	}{
		{"none", "SKILL.md", false},
		{"none", "references/GUIDE.md", false},
		{"digest", "SKILL.md", true},
		{"digest", "references/GUIDE.md", true},
		{"size", "SKILL.md", true},
		{"size", "scripts/hello.sh", true},
		{"frontmatter", "SKILL.md", true},
		{"unlisted", "references/GUIDE.md", true},
	} {
		t.Run(tc.mode+"/"+tc.file, func(t *testing.T) {
			rs := startRefServer(t, env, "--tamper", tc.mode, "--tamper-file", tc.file)
			remote, err := mcpsource.New(t.Context(), rs.Endpoint, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer remote.Close()
			reg, err := registry.New(t.Context(), []source.Source{remote.Source()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			snap := reg.Snapshot()
			if tc.file == "SKILL.md" {
				_, err = snap.Body(t.Context(), "hello-world")
				if _, listed := snap.Lookup("hello-world"); !listed {
					// A SKILL.md that fails verification keeps the skill
					// out of the registry: that is the refusal.
					err = errors.Join(err, mcpsource.ErrVerify)
				}
			} else {
				_, err = snap.ReadFile(t.Context(), "hello-world", tc.file)
			}
			switch {
			case !tc.refused && err != nil:
				t.Errorf("genuine %s refused: %v", tc.file, err)
			case tc.refused && err == nil:
				t.Errorf("tampered %s (%s) accepted", tc.file, tc.mode)
			case tc.refused && !errors.Is(err, mcpsource.ErrVerify) && !errors.Is(err, mcpsource.ErrNotListed) && !strings.Contains(err.Error(), tc.file):
				t.Errorf("tampered %s (%s): an error that neither is a verification error nor names the file: %v", tc.file, tc.mode, err)
			}
			if tc.refused && tc.file == "SKILL.md" {
				var named bool
				for _, d := range snap.Diagnostics() {
					named = named || strings.Contains(d.String(), "hello-world")
				}
				if !named {
					t.Errorf("the refused skill is not in the diagnostics: %v", snap.Diagnostics())
				}
			}
		})
	}
}

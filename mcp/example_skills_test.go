package mcp

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/source"
)

// Example_skillsExtension serves one skill folder with the skills
// extension and reads it back the way a host does: skills/list for the
// entry (front matter and manifest), then resources/read for a file.
func Example_skillsExtension() {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "skills")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	for name, content := range map[string]string{
		"pdf/SKILL.md":            "---\nname: pdf\ndescription: Fill PDF forms.\nmetadata:\n  version: \"2\"\n---\nRead references/forms.md.\n",
		"pdf/references/forms.md": "# Forms\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	src, err := source.Dir(root, "example", 0)
	if err != nil {
		log.Fatal(err)
	}
	reg, err := registry.New(ctx, []source.Source{src}, nil)
	if err != nil {
		log.Fatal(err)
	}

	caps := &sdk.ServerCapabilities{}
	capabilities(caps)
	srv := sdk.NewServer(&sdk.Implementation{Name: "example", Version: "v1"}, &sdk.ServerOptions{Capabilities: caps})
	addSkills(srv, skillsConfig{Snapshot: func(context.Context) *registry.Snapshot { return reg.Snapshot() }})

	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "v1"}, nil)
	if err := sdk.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](client, "skills/list"); err != nil {
		log.Fatal(err)
	}
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	list, err := sdk.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, cs, "skills/list", &listSkillsParams{})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range list.Skills {
		fmt.Println(e.URI, string(e.Frontmatter))
		for _, r := range e.Resources {
			fmt.Println(" ", r.URI, r.Size, r.Digest[:15]+"…")
		}
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://pdf/references/forms.md"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %q\n", res.Contents[0].MIMEType, res.Contents[0].Text)
	// Output:
	// skill://pdf/SKILL.md {"name":"pdf","description":"Fill PDF forms.","metadata":{"version":"2"}}
	//   skill://pdf/SKILL.md 98 sha256:87d31065…
	//   skill://pdf/references/forms.md 8 sha256:111198a6…
	// text/markdown "# Forms\n"
}

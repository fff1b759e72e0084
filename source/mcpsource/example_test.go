package mcpsource_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/source/mcpsource"
)

type exampleListParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type exampleListResult struct {
	sdk.ResultBase
	sdk.Cacheable
	ResultType string `json:"resultType"`
	Skills     []any  `json:"skills"`
}

// A remote server's skills join a registry like a folder of skills.
// Here the server runs in the same process, over an in-memory
// transport; New(ctx, "https://host/mcp", nil) reaches one over
// streamable HTTP.
func Example() {
	ctx := context.Background()
	md := "---\nname: pdf\ndescription: Fill PDF forms.\n---\nUse pdftk.\n"
	sum := sha256.Sum256([]byte(md))

	// The server: the skills extension, skills/list, and the file.
	opts := &sdk.ServerOptions{Capabilities: &sdk.ServerCapabilities{}}
	opts.Capabilities.AddExtension(mcpsource.Extension, nil)
	server := sdk.NewServer(&sdk.Implementation{Name: "skills", Version: "1"}, opts)
	sdk.AddReceivingCustomMethod(server, "skills/list", func(context.Context, *sdk.ServerSession, *exampleListParams) (*exampleListResult, error) {
		return &exampleListResult{ResultType: "complete", Cacheable: sdk.Cacheable{CacheScope: "public"}, Skills: []any{map[string]any{
			"uri":         "skill://acme/pdf/SKILL.md",
			"frontmatter": map[string]any{"name": "pdf", "description": "Fill PDF forms."},
			"resources":   []any{map[string]any{"uri": "skill://acme/pdf/SKILL.md", "digest": "sha256:" + hex.EncodeToString(sum[:]), "size": len(md)}},
		}}}, nil
	})
	server.AddResource(&sdk.Resource{URI: "skill://acme/pdf/SKILL.md", Name: "pdf", MIMEType: "text/markdown"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: md}}}, nil
		})
	clientT, serverT := sdk.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverT, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()

	// The host: list the skills, then let a registry read them.
	remote, err := mcpsource.New(ctx, "", &mcpsource.Options{Transport: clientT, Label: "acme"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer remote.Close()
	for _, s := range remote.Skills() {
		fmt.Printf("listed %s as folder %s\n", s.URI, s.Dir)
	}
	reg, err := registry.New(ctx, []source.Source{remote.Source()}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	snap := reg.Snapshot()
	for _, s := range snap.Summaries() {
		body, err := snap.Body(ctx, s.Name)
		fmt.Printf("%s (%s): %s %q %v\n", s.Name, s.Source, s.Description, body, err)
	}
	// Output:
	// listed skill://acme/pdf/SKILL.md as folder pdf
	// pdf (acme): Fill PDF forms. "Use pdftk." <nil>
}

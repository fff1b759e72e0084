package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/internal/termtext"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/tools"
)

// CatalogPrompt is the name of the prompt that holds the catalog.
const CatalogPrompt = "skills-catalog"

// inputArg is the optional argument of a skill's prompt: what the user
// typed after /name.
const inputArg = "input"

// setPrompts makes the server's prompts those of snap: the catalog and
// one per user-invocable skill (a host shows them as /name commands).
// Prompts in old that are gone are removed; adding and removing send
// prompts/list_changed. It returns the names now served.
func (s *Server) setPrompts(ctx context.Context, srv *sdk.Server, old []string, snap *registry.Snapshot, cat string) []string {
	names := []string{CatalogPrompt}
	srv.AddPrompt(&sdk.Prompt{
		Name:        CatalogPrompt,
		Title:       "Skills catalog",
		Description: "The skills this server offers, with what each is for.",
	}, func(ctx context.Context, _ *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		text := cat
		if text == "" {
			text = "No skills are available."
		}
		return &sdk.GetPromptResult{Description: "The skills this server offers",
			Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}}}, nil
	})
	for _, sum := range snap.Summaries() {
		if !sum.UserInvocable || sum.Name == CatalogPrompt {
			continue
		}
		name := sum.Name
		names = append(names, name)
		srv.AddPrompt(&sdk.Prompt{
			Name: name,
			// Hosts list prompts in terminals: control characters and
			// bidi overrides from the skill's author are shown escaped.
			Description: termtext.Escape(sum.Description),
			Arguments:   []*sdk.PromptArgument{{Name: inputArg, Description: "what to do with the skill (optional)"}},
		}, func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			res, err := s.skillPrompt(ctx, name, req.Params.Arguments[inputArg])
			if err == nil && overHTTP(req.Extra) {
				tc := res.Messages[0].Content.(*sdk.TextContent)
				tc.Text = s.remoteBase(ctx, tc.Text)
			}
			return res, err
		})
	}
	var gone []string
	for _, n := range old {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		srv.RemovePrompts(gone...)
	}
	return names
}

// skillPrompt is a skill invoked by the user: its instructions, then what
// the user asked.
func (s *Server) skillPrompt(ctx context.Context, name, input string) (*sdk.GetPromptResult, error) {
	text, err := tools.RenderUserSkill(ctx, s.kit.Skills(ctx), name)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %q: %s", name, strings.TrimPrefix(text, "Error: "))}
	}
	msgs := []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}}
	if in := strings.TrimSpace(input); in != "" {
		msgs = append(msgs, &sdk.PromptMessage{Role: "user", Content: &sdk.TextContent{Text: in}})
	}
	return &sdk.GetPromptResult{Description: "The " + name + " skill", Messages: msgs}, nil
}

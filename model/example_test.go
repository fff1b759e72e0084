package model_test

import (
	"context"
	"fmt"

	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// One model step of an agent: the request a conversation assembles goes
// to the model, the answer streams in, and the conversation records it.
func Example() {
	ctx := context.Background()
	var m model.Model
	m, _ = scripted.New(&scripted.Script{Steps: []scripted.Step{
		{Text: "Hello, Ann!", Usage: &model.Usage{PromptTokens: 20, CompletionTokens: 4, CachedPromptTokens: 16}},
	}}, nil)

	store := session.NewMemoryStore(nil)
	s, _ := store.Create(ctx, "", nil)
	conv, _ := conversation.Open(ctx, store, s.ID, "main", &conversation.Options{System: "Greet people.", Tools: tools.Static{}})
	_, _ = conv.User(ctx, "I'm Ann.")

	req, _ := conv.Request(ctx)
	for c, err := range m.Stream(ctx, &model.Request{Messages: req.Messages, Tools: req.Tools, CacheKey: s.ID}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Print(c.Text)
		if r := c.Response; r != nil {
			fmt.Printf("\n%s, %+v\n", r.FinishReason, r.Usage)
			_, _ = conv.Respond(ctx, r.Assistant())
		}
	}
	req, _ = conv.Request(ctx)
	last := req.Messages[len(req.Messages)-1]
	fmt.Println(last.Role+":", last.Content)
	// Output:
	// Hello, Ann!
	// stop, {PromptTokens:20 CompletionTokens:4 CachedPromptTokens:16}
	// assistant: Hello, Ann!
}

package openai_test

import (
	"context"
	"fmt"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/openai"
	"github.com/skillkit/skillkit/model/openaitest"
	"github.com/skillkit/skillkit/model/scripted"
)

// Talk to an OpenAI-compatible server — here a local test server that
// first rate-limits the request, then answers with two tool calls. The
// adapter waits as the server asks and retries; the calls keep the
// provider's IDs. For a real server, start from openai.FromEnv(nil).
func Example() {
	srv, _ := openaitest.New(&scripted.Script{Steps: []scripted.Step{
		{Error: &scripted.Error{Status: 429, Message: "Rate limit reached", RetryAfter: "0"}},
		{Calls: []scripted.Call{
			{ID: "call_a1", Name: "weather", Arguments: `{"city":"Oslo"}`},
			{ID: "call_b2", Name: "weather", Arguments: `{"city":"Rome"}`},
		}, Usage: &model.Usage{PromptTokens: 310, CompletionTokens: 24, CachedPromptTokens: 256}},
	}}, nil)
	defer srv.Close()

	m, err := openai.New(&openai.Options{BaseURL: srv.URL, Model: "qwen3-8b"}) // no APIKey: no Authorization header
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := m.Generate(context.Background(), &model.Request{
		Messages: []assembly.Message{{Role: "user", Content: "Weather in Oslo and Rome?"}},
		Tools:    []assembly.ToolSpec{{Type: "function", Function: assembly.FunctionSpec{Name: "weather", Description: "The weather in a city."}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range resp.Calls {
		fmt.Println(c.ID, c.Name, c.Arguments)
	}
	fmt.Printf("%s; prompt %d (cached %d), completion %d; %d requests\n", resp.FinishReason,
		resp.Usage.PromptTokens, resp.Usage.CachedPromptTokens, resp.Usage.CompletionTokens, len(srv.Exchanges()))
	// Output:
	// call_a1 weather {"city":"Oslo"}
	// call_b2 weather {"city":"Rome"}
	// tool_calls; prompt 310 (cached 256), completion 24; 2 requests
}

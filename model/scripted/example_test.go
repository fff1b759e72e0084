package scripted_test

import (
	"context"
	"fmt"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
)

// Replay a script: a tool call, then — once the request carries that
// call's result — the final answer; a request past the end is an error
// that names it.
func Example() {
	script, err := scripted.Parse([]byte(`{"steps": [
	  {"expect": {"tools_include": ["weather"]},
	   "calls": [{"id": "call_1", "name": "weather", "arguments": {"city": "Oslo"}}]},
	  {"expect": {"tool_results": ["call_1"]}, "text": "Sunny in Oslo."}
	]}`), "weather.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	m, _ := scripted.New(script, &scripted.Options{Label: "weather.json"})
	ctx := context.Background()
	req := &model.Request{
		Messages: []assembly.Message{{Role: "user", Content: "Weather in Oslo?"}},
		Tools:    []assembly.ToolSpec{{Type: "function", Function: assembly.FunctionSpec{Name: "weather"}}},
	}

	r, _ := m.Generate(ctx, req)
	fmt.Println(r.Calls[0].ID, r.Calls[0].Name, r.Calls[0].Arguments, r.FinishReason)

	req.Messages = append(req.Messages,
		assembly.Message{Role: "assistant", ToolCalls: []assembly.ToolCall{{ID: "call_1", Type: "function", Function: assembly.FunctionCall{Name: "weather", Arguments: `{"city":"Oslo"}`}}}},
		assembly.Message{Role: "tool", ToolCallID: "call_1", Content: "sunny"})
	r, _ = m.Generate(ctx, req)
	fmt.Println(r.Text, r.Model)

	_, err = m.Generate(ctx, req)
	fmt.Println(err)
	// Output:
	// call_1 weather {"city":"Oslo"} tool_calls
	// Sunny in Oslo. scripted
	// scripted model: weather.json: request 3: the script has no step left (all 2 played)
}

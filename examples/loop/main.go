// Command loop is skills in a model loop of your own: every request holds
// the skill catalog and tools, every answer of the model is recorded and
// its tool calls run, a skill's script in the sandbox. The model here is
// scripted, so no key is needed. From the repository root:
//
//	go run ./examples/loop
//
// The sandbox needs root, or cgroups delegated to the user (the error says
// which options accept less); docs/security.md has the details.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/skillkit/skillkit"
)

func main() {
	ctx := context.Background()
	kit := must(skillkit.New(ctx, &skillkit.Options{Roots: []string{"examples/skills"}, Exec: &skillkit.ExecOptions{}}))
	defer kit.Close()
	conv := must(kit.Open(ctx, "", "assistant")) // "": a new session
	must(conv.User(ctx, "How many rows has the sample CSV?"))
	for _, answer := range model {
		req := must(conv.Request(ctx))          // send req.Messages and req.Tools to your model;
		step := must(conv.Respond(ctx, answer)) // its answer is recorded and its calls run
		fmt.Printf("%d messages, %d tools → %.70q\n", len(req.Messages), len(req.Tools), step.Events[len(step.Events)-1].Text)
	}
}

// model is what a model would answer to each request.
var model = []skillkit.Assistant{
	{Calls: []skillkit.ToolCall{{ID: "call_1", Name: "skill", Arguments: `{"name":"csv-stats"}`}}},
	{Calls: []skillkit.ToolCall{{ID: "call_2", Name: "workspace_exec", Arguments: `{"cwd":"skills/csv-stats","command":"python3 scripts/stats.py scripts/sample.csv"}`}}},
	{Text: "The sample CSV has 3 rows."},
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

package main

import (
	"testing"

	"github.com/skillkit/skillkit/examples/internal/capture"
)

// One turn, event by event: the scripted model loads the skill and then
// answers. Its second step expects the skill's instructions in the request,
// so the answer line is printed only when the load reached the model.
func TestQuickstart(t *testing.T) {
	got := capture.Main(t, main)
	want := `model: scripted (replays a script: no key, no network)
user: How should my API report errors?
response: step 1, model scripted, 1 tool call(s)
tool_result: skill_load {"skill":"api-style-guide"} → loaded: api-style-guide
response: step 2, model scripted, 0 tool call(s)
answer: Follow references/errors.md of the API style guide: one error shape, the right status codes.
usage: 2 steps, prompt 1970 tokens (cached 850), completion 37
`
	if got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

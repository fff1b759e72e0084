package openai

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/session"
)

// accumulator assembles a streamed answer from its chunks.
type accumulator struct {
	text, refusal strings.Builder
	calls         []session.ToolCall
	slot          map[int64]int // the provider's call index → position in calls
	finish        string
	usage         model.Usage
	id, model     string
}

func newAccumulator() *accumulator {
	return &accumulator{slot: map[int64]int{}}
}

// add takes one chunk and returns the pieces it brings.
func (a *accumulator) add(c sdk.ChatCompletionChunk) []model.Chunk {
	if c.ID != "" {
		a.id = c.ID
	}
	if c.Model != "" {
		a.model = c.Model
	}
	// With include_usage the usage comes in a last chunk without choices;
	// some servers send it on every chunk, the last one counts.
	if c.JSON.Usage.Valid() && (c.Usage.PromptTokens != 0 || c.Usage.CompletionTokens != 0) {
		a.usage = usage(c.Usage)
	}
	var out []model.Chunk
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // one answer is asked for
		}
		d := ch.Delta
		if d.Content != "" {
			a.text.WriteString(d.Content)
			out = append(out, model.Chunk{Text: d.Content})
		}
		a.refusal.WriteString(d.Refusal)
		for _, tc := range d.ToolCalls {
			pos, ok := a.slot[tc.Index]
			// A new ID at a known index is a new call: some servers number
			// every call 0.
			if !ok || tc.ID != "" && a.calls[pos].ID != "" && tc.ID != a.calls[pos].ID {
				pos = len(a.calls)
				a.calls = append(a.calls, session.ToolCall{})
				a.slot[tc.Index] = pos
			}
			call := &a.calls[pos]
			delta := model.CallDelta{Index: pos, Arguments: tc.Function.Arguments}
			if tc.ID != "" && call.ID == "" {
				call.ID, delta.ID = tc.ID, tc.ID
			}
			// The name comes whole on the first piece; a server that
			// repeats it on every piece does not make it longer.
			if n := tc.Function.Name; n != "" && n != call.Name {
				call.Name += n
				delta.Name = n
			}
			call.Arguments += tc.Function.Arguments
			out = append(out, model.Chunk{Call: &delta})
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return out
}

// response is the assembled answer; a stream that never said why it
// stopped was cut short.
func (a *accumulator) response(name string) (*model.Response, error) {
	if a.finish == "" {
		return nil, errors.New("the stream ended before the answer was finished (no finish_reason); the connection may have been cut")
	}
	for i, c := range a.calls {
		if c.Name == "" {
			return nil, fmt.Errorf("the server streamed tool call %d without a name", i)
		}
	}
	return &model.Response{
		Text: a.text.String(), Refusal: a.refusal.String(), Calls: a.calls,
		FinishReason: model.FinishReason(a.finish), Usage: a.usage, ID: a.id, Model: cmp.Or(a.model, name),
	}, nil
}

// usage converts the provider's usage. Cached prompt tokens are read from
// prompt_tokens_details.cached_tokens, or DeepSeek's
// prompt_cache_hit_tokens.
func usage(u sdk.CompletionUsage) model.Usage {
	cached := u.PromptTokensDetails.CachedTokens
	if cached == 0 {
		if f, ok := u.JSON.ExtraFields["prompt_cache_hit_tokens"]; ok {
			cached, _ = strconv.ParseInt(f.Raw(), 10, 64)
		}
	}
	return model.Usage{PromptTokens: int(u.PromptTokens), CompletionTokens: int(u.CompletionTokens), CachedPromptTokens: int(cached)}
}

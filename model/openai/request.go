package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/skillkit/skillkit/model"
)

// errBodyBuilt stops RequestBody's request at the HTTP layer, once the
// body is taken and before anything is sent.
var errBodyBuilt = errors.New("openai: the request body is built; nothing is sent")

// RequestBody returns the body Generate (stream false) or Stream (stream
// true) would send for req, byte for byte, without sending anything: the
// request goes through the same conversion and the same SDK serialization
// (ExtraBody and LegacyMaxTokens included) and is stopped at the HTTP layer
// where CaptureRequest would see it. It is for showing what a request is
// when no server is asked, a scripted run say.
func (m *Model) RequestBody(req *model.Request, stream bool) ([]byte, error) {
	p, err := m.params(req, stream)
	if err != nil {
		return nil, err
	}
	var body []byte
	stop := option.WithMiddleware(func(r *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
		b, err := requestBody(r)
		if err != nil {
			return nil, fmt.Errorf("reading the request body: %w", err)
		}
		body = b
		return nil, errBodyBuilt
	})
	// No I/O happens, so no caller's context is needed: the request ends
	// in the middleware above.
	ctx := context.Background()
	if stream {
		s := m.svc.NewStreaming(ctx, p, m.options([]option.RequestOption{stop})...)
		err = s.Err()
		_ = s.Close()
	} else {
		_, err = m.svc.New(ctx, p, m.options([]option.RequestOption{stop})...)
	}
	if !errors.Is(err, errBodyBuilt) {
		return nil, fmt.Errorf("openai: building the request body: %w", err)
	}
	return body, nil
}

// options are the request options of one request: opts (the HTTP
// layer's), then the ExtraBody fields, in the order every request applies
// them, so the bodies Generate, Stream and RequestBody make agree.
func (m *Model) options(opts []option.RequestOption) []option.RequestOption {
	return append(opts, m.extra...)
}

// params converts a request into the SDK's parameters; a message or tool
// it cannot send is an error naming it.
func (m *Model) params(req *model.Request, stream bool) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{Model: m.name}
	for i, msg := range req.Messages {
		switch msg.Role {
		case "system":
			p.Messages = append(p.Messages, sdk.SystemMessage(msg.Content))
		case "developer":
			p.Messages = append(p.Messages, sdk.DeveloperMessage(msg.Content))
		case "user":
			p.Messages = append(p.Messages, sdk.UserMessage(msg.Content))
		case "tool":
			if msg.ToolCallID == "" {
				return p, fmt.Errorf("openai: Request.Messages[%d] is a tool result without the ID of the call it answers (ToolCallID)", i)
			}
			p.Messages = append(p.Messages, sdk.ToolMessage(msg.Content, msg.ToolCallID))
		case "assistant":
			a := sdk.ChatCompletionAssistantMessageParam{}
			// A message that only calls tools has no content, as the
			// provider sent it.
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = sdk.String(msg.Content)
			}
			for j, c := range msg.ToolCalls {
				if c.Type != "" && c.Type != "function" {
					return p, fmt.Errorf("openai: Request.Messages[%d].ToolCalls[%d] has type %q; only function calls can be sent", i, j, c.Type)
				}
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Function.Name, Arguments: c.Function.Arguments},
				}})
			}
			p.Messages = append(p.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return p, fmt.Errorf("openai: Request.Messages[%d] has role %q; want system, developer, user, assistant or tool", i, msg.Role)
		}
	}
	for i, t := range req.Tools {
		if t.Type != "" && t.Type != "function" {
			return p, fmt.Errorf("openai: Request.Tools[%d] (%s) has type %q; only function tools can be sent", i, t.Function.Name, t.Type)
		}
		fn := shared.FunctionDefinitionParam{Name: t.Function.Name}
		if t.Function.Description != "" {
			fn.Description = sdk.String(t.Function.Description)
		}
		if t.Function.Parameters != nil {
			params, err := jsonObject(t.Function.Parameters)
			if err != nil {
				return p, fmt.Errorf("openai: Request.Tools[%d] (%s): the parameters schema: %w", i, t.Function.Name, err)
			}
			fn.Parameters = params
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionToolUnionParam{OfFunction: &sdk.ChatCompletionFunctionToolParam{Function: fn}})
	}
	if o := req.Output; o != nil {
		name, err := o.SchemaName()
		if err != nil {
			return p, err
		}
		schema, err := json.Marshal(o.Schema)
		if err != nil {
			return p, fmt.Errorf("openai: Request.Output.Schema: %w", err)
		}
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: json.RawMessage(schema)}
		if o.Description != "" {
			js.Description = sdk.String(o.Description)
		}
		if o.Strict {
			js.Strict = sdk.Bool(true)
		}
		p.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}}
	}
	if req.CacheKey != "" {
		p.PromptCacheKey = sdk.String(req.CacheKey)
	}
	if req.Temperature != nil {
		p.Temperature = sdk.Float(*req.Temperature)
	}
	if req.MaxTokens != nil {
		if *req.MaxTokens <= 0 {
			return p, fmt.Errorf("openai: Request.MaxTokens is %d; want a positive bound, or nil for none", *req.MaxTokens)
		}
		if m.legacy {
			p.MaxTokens = sdk.Int(int64(*req.MaxTokens))
		} else {
			p.MaxCompletionTokens = sdk.Int(int64(*req.MaxTokens))
		}
	}
	if stream {
		p.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	}
	return p, nil
}

// jsonObject turns a schema into the generic object the SDK sends. The
// values stay raw JSON, so the SDK writes them byte for byte as the schema
// marshals them (numbers too); only the top-level keys are reordered.
func jsonObject(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return nil, fmt.Errorf("it is not a JSON object: %s", b)
	}
	obj := make(map[string]any, len(raw))
	for k, v := range raw {
		obj[k] = v
	}
	return obj, nil
}

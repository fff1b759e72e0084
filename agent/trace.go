package agent

import (
	"context"
	"errors"
	"strconv"

	"github.com/skillkit/skillkit/internal/tracing"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/tools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the agent's tracer: the package's import path.
const tracerName = "github.com/skillkit/skillkit/agent"

// The attributes of the agent's spans: the OpenTelemetry GenAI semantic
// conventions' where they have one, skillkit's own otherwise. None holds
// a prompt, an answer, tool arguments or a result: only names, counts and
// IDs.
const (
	attrOperation      = attribute.Key("gen_ai.operation.name")
	attrAgentName      = attribute.Key("gen_ai.agent.name")
	attrConversationID = attribute.Key("gen_ai.conversation.id")
	attrRequestModel   = attribute.Key("gen_ai.request.model")
	attrResponseModel  = attribute.Key("gen_ai.response.model")
	attrResponseID     = attribute.Key("gen_ai.response.id")
	attrFinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	attrOutputType     = attribute.Key("gen_ai.output.type")
	attrInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	attrCacheRead      = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	attrToolName       = attribute.Key("gen_ai.tool.name")
	attrToolCallID     = attribute.Key("gen_ai.tool.call.id")
	attrToolType       = attribute.Key("gen_ai.tool.type")
	attrErrorType      = attribute.Key("error.type")

	attrSteps     = attribute.Key("skillkit.agent.steps")
	attrStep      = attribute.Key("skillkit.agent.step")
	attrStopped   = attribute.Key("skillkit.agent.stopped")
	attrToolError = attribute.Key("skillkit.tool.error")
	attrToolLoads = attribute.Key("skillkit.tool.loads")
)

// The operation names of the spans.
const (
	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"
)

// modelName is what a model that names itself implements (model/openai
// and model/scripted do): the name goes into the chat span as the
// requested model.
type modelName interface{ Name() string }

// requestModel returns the model's name, or "" when it has none.
func (a *Agent) requestModel() string {
	if n, ok := a.model.(modelName); ok {
		return n.Name()
	}
	return ""
}

// startRun starts the span of one run; the session's ID and the steps
// are set on it as the run learns them.
func (a *Agent) startRun(ctx context.Context) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{attrOperation.String(opInvokeAgent), attrAgentName.String(a.name)}
	if m := a.requestModel(); m != "" {
		attrs = append(attrs, attrRequestModel.String(m))
	}
	return a.tracer.Start(ctx, opInvokeAgent+" "+a.name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// startChat starts the span of one model request. Named by the model
// where the model names itself, as the conventions say; "chat" alone
// otherwise.
func (a *Agent) startChat(ctx context.Context, call ModelCall) (context.Context, trace.Span) {
	name := opChat
	attrs := []attribute.KeyValue{attrOperation.String(opChat), attrAgentName.String(a.name),
		attrConversationID.String(call.SessionID), attrStep.Int(call.Step)}
	if m := a.requestModel(); m != "" {
		name += " " + m
		attrs = append(attrs, attrRequestModel.String(m))
	}
	if call.Request.Output != nil {
		attrs = append(attrs, attrOutputType.String("json"))
	}
	return a.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endChat ends a model request's span with the answer's model, finish
// reason and usage, or with its error. A caller that stopped ranging is
// no failure of the model.
func (a *Agent) endChat(span trace.Span, resp *model.Response, err error) {
	switch {
	case errors.Is(err, errStopped):
		span.SetAttributes(attrStopped.Bool(true))
		err = nil
	case err != nil:
		span.SetAttributes(attrErrorType.String(errorType(err)))
	case resp != nil:
		if resp.Model != "" {
			span.SetAttributes(attrResponseModel.String(resp.Model))
		}
		if resp.ID != "" {
			span.SetAttributes(attrResponseID.String(resp.ID))
		}
		if resp.FinishReason != "" {
			span.SetAttributes(attrFinishReasons.StringSlice([]string{string(resp.FinishReason)}))
		}
		setUsage(span, resp.Usage)
	}
	tracing.End(span, err)
}

// setUsage sets the token counts of u on span. Cached tokens are part of
// the input tokens, as the conventions count them and model.Usage does.
func setUsage(span trace.Span, u model.Usage) {
	span.SetAttributes(attrInputTokens.Int(u.PromptTokens), attrOutputTokens.Int(u.CompletionTokens),
		attrCacheRead.Int(u.CachedPromptTokens))
}

// errorType is the error.type of a failed model request: the provider's
// HTTP status when it answered with one, the context's end, or the
// conventions' "_OTHER".
func errorType(err error) string {
	var api *model.APIError
	switch {
	case errors.As(err, &api) && api.Status != 0:
		return strconv.Itoa(api.Status)
	case errors.Is(err, context.Canceled):
		return "context.Canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "context.DeadlineExceeded"
	}
	return "_OTHER"
}

// startTool starts the span of one tool call, under the run's.
func (a *Agent) startTool(ctx context.Context, tc ToolCall) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{attrOperation.String(opExecuteTool), attrToolName.String(tc.Call.Name), attrToolType.String("function")}
	if tc.Call.ID != "" {
		attrs = append(attrs, attrToolCallID.String(tc.Call.ID))
	}
	return a.tracer.Start(ctx, opExecuteTool+" "+tc.Call.Name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endTool ends a tool call's span with its outcome: an error result or a
// host failure marks it failed.
func (a *Agent) endTool(span trace.Span, res tools.Result, err error) {
	span.SetAttributes(attrToolError.Bool(res.IsError || err != nil), attrToolLoads.Int(len(res.Effects)))
	switch {
	case err != nil:
		tracing.End(span, err)
		return
	case res.IsError:
		span.SetAttributes(attrErrorType.String("tool_error"))
		tracing.Fail(span, "the tool's result is an error")
	}
	span.End()
}

// Package tracingtest records the spans a test's code emits and checks
// them against what the test expects: names, parents, attributes and
// status. It is for skillkit's own tests.
package tracingtest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Recorder returns a tracer provider that records every span into the
// returned recorder, shut down when the test ends.
func Recorder(t testing.TB) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, rec
}

// Want is what a test expects of one ended span.
type Want struct {
	// Name is the span's name.
	Name string
	// Parent is the parent span's name; "" for a root span.
	Parent string
	// Attrs are attributes the span must have with these values; it may
	// have others.
	Attrs map[attribute.Key]attribute.Value
	// Failed says the span's status is Error.
	Failed bool
}

// Check compares the ended spans, in the order they ended, with want.
// Every parent must be among the spans, in the same trace.
func Check(t testing.TB, got []sdktrace.ReadOnlySpan, want []Want) {
	t.Helper()
	byID := make(map[trace.SpanID]sdktrace.ReadOnlySpan, len(got))
	var gotNames, wantNames []string
	for _, s := range got {
		byID[s.SpanContext().SpanID()] = s
		gotNames = append(gotNames, s.Name())
	}
	for _, w := range want {
		wantNames = append(wantNames, w.Name)
	}
	if !slices.Equal(gotNames, wantNames) {
		t.Fatalf("spans\n\t%s\nwant\n\t%s", strings.Join(gotNames, "\n\t"), strings.Join(wantNames, "\n\t"))
	}
	for i, w := range want {
		s := got[i]
		parent := ""
		if p := s.Parent(); p.IsValid() {
			ps, ok := byID[p.SpanID()]
			switch {
			case !ok:
				t.Errorf("span %d %q: its parent is not among the recorded spans", i, s.Name())
			case ps.SpanContext().TraceID() != s.SpanContext().TraceID():
				t.Errorf("span %d %q is in another trace than its parent", i, s.Name())
			default:
				parent = ps.Name()
			}
		}
		if parent != w.Parent {
			t.Errorf("span %d %q: parent %q, want %q", i, s.Name(), parent, w.Parent)
		}
		attrs := Attrs(s)
		for k, v := range w.Attrs {
			if g, ok := attrs[k]; !ok || g != v {
				t.Errorf("span %d %q: %s = %s, want %s", i, s.Name(), k, g.Emit(), v.Emit())
			}
		}
		if failed := s.Status().Code == codes.Error; failed != w.Failed {
			t.Errorf("span %d %q: status %v (%q), want failed %v", i, s.Name(), s.Status().Code, s.Status().Description, w.Failed)
		}
	}
}

// Attrs returns a span's attributes by key.
func Attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	attrs := make(map[attribute.Key]attribute.Value)
	for _, kv := range s.Attributes() {
		attrs[kv.Key] = kv.Value
	}
	return attrs
}

// NoContent fails the test when an attribute of any span holds one of
// texts (a file's content, a command's output), which spans never carry.
func NoContent(t testing.TB, spans []sdktrace.ReadOnlySpan, texts ...string) {
	t.Helper()
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			for _, text := range texts {
				if strings.Contains(kv.Value.Emit(), text) {
					t.Errorf("span %q: attribute %s holds %q", s.Name(), kv.Key, text)
				}
			}
		}
	}
}

// Str is a string attribute value, for Want.Attrs.
func Str(s string) attribute.Value { return attribute.StringValue(s) }

// Int is an int attribute value.
func Int(n int) attribute.Value { return attribute.IntValue(n) }

// Int64 is an int64 attribute value.
func Int64(n int64) attribute.Value { return attribute.Int64Value(n) }

// Bool is a bool attribute value.
func Bool(b bool) attribute.Value { return attribute.BoolValue(b) }

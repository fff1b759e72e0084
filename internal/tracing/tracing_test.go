package tracing_test

import (
	"errors"
	"testing"

	"github.com/skillkit/skillkit/internal/tracing"
	"github.com/skillkit/skillkit/internal/tracing/tracingtest"
	"go.opentelemetry.io/otel/codes"
)

func TestEnd(t *testing.T) {
	tp, rec := tracingtest.Recorder(t)
	tr := tracing.Tracer(tp, "test")
	for _, tc := range []struct {
		name   string
		err    error
		fail   string
		code   codes.Code
		desc   string
		events int
	}{
		{"success", nil, "", codes.Unset, "", 0},
		{"an error", errors.New("disk full"), "", codes.Error, "disk full", 1},
		{"a failure without an error", nil, "exit 3", codes.Error, "exit 3", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, span := tr.Start(t.Context(), tc.name)
			if tc.fail != "" {
				tracing.Fail(span, tc.fail)
			}
			tracing.End(span, tc.err)
			s := rec.Ended()[len(rec.Ended())-1]
			if s.Status().Code != tc.code || s.Status().Description != tc.desc || len(s.Events()) != tc.events {
				t.Errorf("status %v %q, %d events; want %v %q, %d", s.Status().Code, s.Status().Description, len(s.Events()), tc.code, tc.desc, tc.events)
			}
		})
	}
}

// Without a provider the global one serves, which records nothing until
// the application installs one.
func TestTracerWithoutAProvider(t *testing.T) {
	_, span := tracing.Tracer(nil, "test").Start(t.Context(), "s")
	defer span.End()
	if span.IsRecording() {
		t.Error("a span of the default global provider records")
	}
}

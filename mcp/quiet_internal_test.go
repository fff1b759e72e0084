package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestQuietUnsent(t *testing.T) {
	unsent := "calling notifications/tools/list_changed: stream not connected or already closed"
	for _, tc := range []struct {
		name  string
		level slog.Level // of the handler
		msg   string
		want  string // in the output; "" for nothing
	}{
		{"demoted below the handler's level", slog.LevelInfo, unsent, ""},
		{"kept at debug", slog.LevelDebug, unsent, "level=DEBUG"},
		{"other warnings untouched", slog.LevelInfo, "calling notifications/tools/list_changed: write: broken pipe", "level=WARN"},
		{"other messages untouched", slog.LevelInfo, "stream not connected", "level=WARN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := slog.New(quietUnsent{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level})}).With("server", "x")
			l.Log(context.Background(), slog.LevelWarn, tc.msg)
			got := buf.String()
			if tc.want == "" && got != "" || tc.want != "" && (!strings.Contains(got, tc.want) || !strings.Contains(got, "server=x")) {
				t.Errorf("logged %q, want %q", got, tc.want)
			}
		})
	}
}

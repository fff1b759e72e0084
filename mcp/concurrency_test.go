package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/mcp"
)

// TestConcurrentClientsDuringReload runs 32 HTTP clients at once, half on
// each protocol revision, each a session of its own with a workspace,
// while the skills root changes and the server refreshes over and over
// (a skill rewritten by rename, another added and removed). Run under
// -race it checks the server's shared state; on the wire it checks that
// a skill never changed away is always found, that sessions never see
// each other's load state or files, and that nothing fails.
func TestConcurrentClientsDuringReload(t *testing.T) {
	root := writeSkills(t)
	_, srv := newServer(t, root, localRunner(t), &mcp.Options{Refresh: -1, MaxSessions: 64})
	ep := serveHTTP(t, srv, nil)

	ctx, stop := context.WithCancel(t.Context())
	var reloads atomic.Int64
	changer := make(chan error, 1)
	go func() {
		// Rewrites greet's description by rename (readers see the old
		// file or the new one, never a partial one), adds and removes
		// "extra", and refreshes, until the clients are done.
		var err error
		defer func() { changer <- err }()
		greet := filepath.Join(root, "greet", "SKILL.md")
		for i := 0; ctx.Err() == nil; i++ {
			body := fmt.Sprintf("---\nname: greet\ndescription: Greets people by name, take %d. Use when asked to greet.\n---\n\n# Greet\n\nSay hello.\n", i)
			tmp := greet + ".tmp"
			if err = os.WriteFile(tmp, []byte(body), 0o644); err != nil {
				return
			}
			if err = os.Rename(tmp, greet); err != nil {
				return
			}
			extra := filepath.Join(root, "extra")
			if i%2 == 0 {
				if err = os.MkdirAll(extra, 0o755); err != nil {
					return
				}
				err = os.WriteFile(filepath.Join(extra, "SKILL.md"), []byte("---\nname: extra\ndescription: Comes and goes.\n---\n\nExtra.\n"), 0o644)
			} else {
				err = os.RemoveAll(extra)
			}
			if err != nil {
				return
			}
			if err = srv.Refresh(ctx); err != nil && ctx.Err() != nil {
				err = nil
				return
			} else if err != nil {
				return
			}
			reloads.Add(1)
		}
	}()

	const clients, rounds = 32, 8
	var changing atomic.Int64
	errChanging := errors.New("changing on disk")
	var wg sync.WaitGroup
	errs := make(chan error, clients*rounds)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			version := "2025-11-25"
			if c%2 == 1 {
				version = "2026-07-28"
			}
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "race", Version: "1"}, nil).Connect(ctx,
				&sdk.StreamableClientTransport{Endpoint: ep, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				errs <- fmt.Errorf("client %d: connect: %w", c, err)
				return
			}
			defer cs.Close()
			var meta sdk.Meta
			do := func(name string, args map[string]any) (string, error) {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args, Meta: meta})
				if err != nil {
					return "", fmt.Errorf("client %d (%s): %s: %w", c, version, name, err)
				}
				var text strings.Builder
				for _, ct := range res.Content {
					if tc, ok := ct.(*sdk.TextContent); ok {
						text.WriteString(tc.Text)
					}
				}
				if res.IsError {
					if strings.Contains(text.String(), "are changing on disk") {
						// Allowed: the skill changed again and again while
						// the call renewed its snapshot; the model is told
						// to try again.
						changing.Add(1)
						return "", errChanging
					}
					return "", fmt.Errorf("client %d (%s): %s %v: %s", c, version, name, args, text.String())
				}
				if id, _ := res.Meta[mcp.SessionMetaKey].(string); id != "" && meta == nil {
					meta = sdk.Meta{mcp.SessionMetaKey: id}
				}
				return text.String(), nil
			}
			loaded, wrote := false, -1
			for i := range rounds {
				text, err := do("skill", map[string]any{"name": "greet"})
				switch {
				case errors.Is(err, errChanging):
				case err != nil:
					errs <- err
					return
				case !strings.Contains(text, "Say hello"):
					errs <- fmt.Errorf("client %d: greet's body: %q", c, text)
				default:
					loaded = true
				}
				if loaded {
					if _, err := do("skill_read", map[string]any{"skill": "greet", "path": "references/style.md"}); err != nil && !errors.Is(err, errChanging) {
						errs <- err
						return
					}
				}
				want := fmt.Sprintf("client-%d-round-%d", c, i)
				text, err = do("workspace_exec", map[string]any{"command": "cat mine 2>/dev/null; echo " + want + " > mine"})
				if errors.Is(err, errChanging) {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				// The workspace holds what this client wrote last, and
				// nothing of another's.
				if prev := fmt.Sprintf("client-%d-round-%d", c, wrote); wrote >= 0 && !strings.Contains(text, prev) || strings.Contains(text, "client-") && !strings.Contains(text, fmt.Sprintf("client-%d-", c)) {
					errs <- fmt.Errorf("client %d round %d: the workspace holds %q, want its own %s", c, i, text, prev)
				}
				wrote = i
				lr, err := cs.ListResources(ctx, nil)
				if err != nil {
					errs <- fmt.Errorf("client %d: resources/list: %w", c, err)
					return
				}
				if !slices.ContainsFunc(lr.Resources, func(r *sdk.Resource) bool { return r.URI == "skill://greet/SKILL.md" }) {
					errs <- fmt.Errorf("client %d: resources/list lacks greet: %d resources", c, len(lr.Resources))
				}
				rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://greet/SKILL.md"})
				switch {
				case err != nil && strings.Contains(err.Error(), "is changing on disk"):
					changing.Add(1)
				case err != nil:
					errs <- fmt.Errorf("client %d: resources/read: %w", c, err)
					return
				case len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "name: greet"):
					errs <- fmt.Errorf("client %d: resources/read of greet: %+v", c, rr.Contents)
				}
			}
		}()
	}
	wg.Wait()
	stop()
	if err := <-changer; err != nil {
		t.Fatalf("changing the root: %v", err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if reloads.Load() == 0 {
		t.Error("no refresh happened while the clients ran")
	}
	t.Logf("%d refreshes while %d clients made %d rounds each; %d calls found the skill changing on every try", reloads.Load(), clients, rounds, changing.Load())
}

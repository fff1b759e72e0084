package sandbox

import (
	"context"
	"maps"
	"testing"
)

// recordRunner records the Spec it receives.
type recordRunner struct{ got Spec }

func (r *recordRunner) Run(_ context.Context, spec Spec) (*Result, error) {
	r.got = spec
	return &Result{}, nil
}

type ctxKey struct{}

func TestWithEnv(t *testing.T) {
	provider := func(ctx context.Context) map[string]string {
		v, _ := ctx.Value(ctxKey{}).(map[string]string)
		return v
	}
	cases := []struct {
		name     string
		provided map[string]string
		env      map[string]string
		toolEnv  map[string]string
		want     map[string]string
	}{
		{"injects", map[string]string{"GITHUB_TOKEN": "t1"}, nil, nil, map[string]string{"GITHUB_TOKEN": "t1"}},
		{"explicit Env wins", map[string]string{"GITHUB_TOKEN": "t1", "A": "p"}, map[string]string{"GITHUB_TOKEN": "mine"}, nil,
			map[string]string{"GITHUB_TOKEN": "mine", "A": "p"}},
		{"explicit ToolEnv wins", map[string]string{"MODE": "p"}, nil, map[string]string{"MODE": "tool"}, nil},
		{"nil map skips", nil, map[string]string{"X": "1"}, nil, map[string]string{"X": "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordRunner{}
			r := WithEnv(rec, provider)
			orig := maps.Clone(tc.env)
			ctx := context.WithValue(context.Background(), ctxKey{}, tc.provided)
			if _, err := r.Run(ctx, Spec{Env: tc.env, ToolEnv: tc.toolEnv}); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(rec.got.Env, tc.want) {
				t.Errorf("Env = %v, want %v", rec.got.Env, tc.want)
			}
			if !maps.Equal(tc.env, orig) {
				t.Errorf("caller's Env map was modified: %v", tc.env)
			}
		})
	}
}

func TestWithEnvNilProviderReturnsRunner(t *testing.T) {
	rec := &recordRunner{}
	if got := WithEnv(rec, nil); got != Runner(rec) {
		t.Errorf("WithEnv(r, nil) = %T, want r itself", got)
	}
}

func TestWithEnvPerCall(t *testing.T) {
	rec := &recordRunner{}
	n := 0
	r := WithEnv(rec, func(context.Context) map[string]string {
		n++
		return map[string]string{"N": string(rune('0' + n))}
	})
	for want := 1; want <= 2; want++ {
		if _, err := r.Run(context.Background(), Spec{}); err != nil {
			t.Fatal(err)
		}
		if rec.got.Env["N"] != string(rune('0'+want)) || n != want {
			t.Errorf("call %d: provider calls %d, Env %v", want, n, rec.got.Env)
		}
	}
}

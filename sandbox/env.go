package sandbox

import (
	"context"
	"maps"
)

// EnvProvider returns variables to inject into one call, typically read
// from the request context (a per-user token, for example). A nil map
// means nothing to inject.
type EnvProvider func(ctx context.Context) map[string]string

// WithEnv returns a Runner that, on every call, adds the provider's
// variables to Spec.Env before delegating to r. Keys the caller passed
// explicitly in Spec.Env or Spec.ToolEnv win over provided ones. The
// provider is evaluated per call and no state is shared between calls. A
// nil provider returns r itself; a nil or empty map skips the copy. Start
// injects the same way, when r can start commands (CanStart).
func WithEnv(r Runner, provider EnvProvider) Runner {
	if provider == nil {
		return r
	}
	return &envRunner{next: r, provider: provider}
}

// envRunner is the Runner returned by WithEnv.
type envRunner struct {
	next     Runner
	provider EnvProvider
}

// Unwrap returns the wrapped runner, so that WorkspacePath, MaxTimeout,
// MaxStartTimeout and CanStart see its capabilities.
func (e *envRunner) Unwrap() Runner { return e.next }

// Run implements Runner.
func (e *envRunner) Run(ctx context.Context, spec Spec) (*Result, error) {
	return e.next.Run(ctx, e.inject(ctx, spec))
}

// Start implements Starter, injecting as Run does; it fails with
// ErrStartUnsupported when the wrapped runner cannot start commands.
func (e *envRunner) Start(ctx context.Context, spec Spec) (Process, error) {
	return Start(ctx, e.next, e.inject(ctx, spec))
}

// inject returns spec with the provider's variables added to Env.
func (e *envRunner) inject(ctx context.Context, spec Spec) Spec {
	injected := e.provider(ctx)
	if len(injected) == 0 {
		return spec
	}
	env := make(map[string]string, len(injected)+len(spec.Env))
	for k, v := range injected {
		if _, explicit := spec.ToolEnv[k]; explicit {
			continue
		}
		env[k] = v
	}
	maps.Copy(env, spec.Env) // explicit keys win
	spec.Env = env
	return spec
}

//go:build linux

package sandbox

import (
	"context"
	"io"
	"net/url"
	"testing"

	"github.com/skillkit/skillkit/internal/podmantest"
)

// podmanEnv is the Podman the container tests run against.
type podmanEnv = podmantest.Env

// startPodman starts it for the test (see podmantest.Start).
func startPodman(t testing.TB) *podmanEnv { return podmantest.Start(t) }

// containers lists the ids of the containers labelled with the runner r.
func containersOf(t testing.TB, e *podmanEnv, r Runner) []string {
	t.Helper()
	cr := r.(*containerRunner)
	var list []ctrListed
	q := url.Values{"all": {"1"}, "filters": {`{"label":["` + labelRunner + "=" + cr.id + `"]}`}}
	if err := newEngine(e.Socket).call(context.Background(), "GET", "/containers/json", q, nil, &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	return ids
}

// newContainerRunner returns a runner on env, closed when the test ends.
func newContainerRunner(t testing.TB, env *podmanEnv, opts ContainerOptions) Runner {
	t.Helper()
	opts.Socket, opts.Image = env.Socket, env.Image
	if opts.Logger == nil {
		opts.Logger = discardLogger()
	}
	r, err := NewContainer(&opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.(io.Closer).Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

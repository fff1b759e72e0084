package sandbox

import (
	"context"
	"testing"
)

func TestZZT(t *testing.T) {
	r, _ := NewIsolated(testIsolatedOptions(DefaultKillGrace))
	ws := testWorkspace(t)
	for i := 0; i < 30; i++ {
		r.Run(context.Background(), Spec{Args: []string{"/bin/true"}, Workspace: ws})
	}
}

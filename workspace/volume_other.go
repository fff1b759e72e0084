//go:build !linux

package workspace

// unmountVolume does nothing where workspaces have no volumes.
func unmountVolume(string) error { return nil }

//go:build !unix

package cli

// checkPrivateDir accepts dir: ownership is not checked on this system.
func checkPrivateDir(dir string) error { return nil }

//go:build !linux

package workspace

import "os"

// exchange is unavailable outside Linux; replaceDir falls back to two
// renames.
func exchange(*os.Root, string, string) error { return errNoExchange }

package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
)

// maxFilesLimit bounds --max-files: a skill's listing examines four
// entries per allowed file, and staging refuses more than
// workspace.DefaultMaxSkillFiles.
const maxFilesLimit = 1_000_000

// addLimitFlags gives cmd the per-skill limit flags of the commands that
// read skills, --max-files and --max-bytes (as persistent flags, for
// every subcommand, when persistent is set). Every registration sets
// them to the defaults first.
func addLimitFlags(cmd *cobra.Command, env *Env, persistent bool) {
	fs := cmd.Flags()
	if persistent {
		fs = cmd.PersistentFlags()
	}
	fs.IntVar(&env.maxFiles, "max-files", skill.DefaultMaxFiles,
		"files one skill may hold; a skill with more keeps the first N (SKILL.md first), which every command lists, reads and stages")
	fs.Int64Var(&env.maxBytes, "max-bytes", skill.DefaultMaxBytes,
		"bytes one skill's files may hold in all; a skill holding more keeps the files that fit, first met first")
	env.limitFlags = true
}

// registryOptions returns the registry options of the limit flags, or an
// error naming a flag out of range: the limits, the flags as what the
// warning about a truncated skill tells the user to raise, and whether
// discovery lists the skill folders (Env.listFiles). A command without the
// flags gets the default limits.
func (env *Env) registryOptions() (*registry.Options, error) {
	o := &registry.Options{LimitNames: skill.LimitNames{MaxFiles: "--max-files", MaxBytes: "--max-bytes"}, ListFiles: env.listFiles}
	if !env.limitFlags {
		return o, nil
	}
	switch {
	case env.maxFiles < 1 || env.maxFiles > maxFilesLimit:
		return nil, fmt.Errorf("--max-files is %d; give a number of files from 1 to %d (default %d)", env.maxFiles, maxFilesLimit, skill.DefaultMaxFiles)
	case env.maxBytes < 1:
		return nil, fmt.Errorf("--max-bytes is %d; give a positive number of bytes (default %d, 16 MiB)", env.maxBytes, skill.DefaultMaxBytes)
	}
	o.Limits = skill.Limits{MaxFiles: env.maxFiles, MaxBytes: env.maxBytes}
	return o, nil
}

package clirun

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// ReorderArgs lets flags come after positional arguments, as with grep and
// rg: urfave/cli stops parsing flags at the first positional argument, so
// this moves every flag of the command named in args (a subcommand
// included) before its positionals, which follow a "--". A "--" already in
// args ends the flags: everything after it stays positional, so a pattern
// that starts with '-' is written `julyfs grep -- -x /`. A lone "-" is a
// positional. Arguments before the command name (app flags) and commands
// that are not found are left as they are.
func ReorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		i++ // app-level flags (--help) are all booleans
	}
	if i >= len(args) {
		return args
	}
	cmd := findCommand(app.Commands, args[i])
	if cmd == nil {
		return args
	}
	i++
	for len(cmd.Subcommands) > 0 && i < len(args) {
		sub := findCommand(cmd.Subcommands, args[i])
		if sub == nil {
			break
		}
		cmd, i = sub, i+1
	}
	if len(cmd.Subcommands) > 0 {
		// The rest belongs to the parent command's own action; leave
		// it as written rather than guess.
		return args
	}
	out := slices.Clone(args[:i])
	return append(out, reorder(cmd.Flags, args[i:])...)
}

// reorder moves the flags in rest before its positionals.
func reorder(flags []cli.Flag, rest []string) []string {
	var fl, pos []string
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			pos = append(pos, rest[j+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		fl = append(fl, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue(flags, name) && j+1 < len(rest) {
			fl = append(fl, rest[j+1])
			j++
		}
	}
	if len(pos) == 0 || slices.Contains(fl, "--help") || slices.Contains(fl, "-h") {
		// Help shows the command's usage, whatever else was typed.
		return fl
	}
	fl = append(fl, "--")
	return append(fl, pos...)
}

// takesValue reports whether the flag called name is defined and takes a
// value (is not a boolean). Unknown flags are left for cli to report.
func takesValue(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			_, isBool := f.(*cli.BoolFlag)
			return !isBool
		}
	}
	return false
}

// findCommand returns the command called name (or an alias), or nil.
func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

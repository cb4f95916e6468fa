package rootspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/julyfs/julyfs/vfs"
)

// ParseMount parses one --mount value, PREFIX=KIND:ARG[?OPTIONS]. A
// relative directory resolves against baseDir (the working directory, for
// a command line). A local directory must exist. Errors are *Error values
// naming the value and what is wrong.
func ParseMount(value, baseDir string) (Mount, error) {
	fail := func(format string, args ...any) (Mount, error) {
		return Mount{}, &Error{Flag: value, Msg: fmt.Sprintf(format, args...), fromFlag: true}
	}
	prefix, body, ok := strings.Cut(value, "=")
	if !ok {
		return fail("missing '=': want PREFIX=KIND:ARG, e.g. /repo=local:./src or /=temp:")
	}
	clean, msg := checkPrefix(prefix)
	if msg != "" {
		return fail("%s", msg)
	}
	spec, err := parseSpec(body, baseDir)
	if err != nil {
		return Mount{}, &Error{Flag: value, Prefix: clean, Msg: err.Error(), Err: errors.Unwrap(err), fromFlag: true}
	}
	spec.Origin = "--mount " + redactPassword(value)
	return Mount{Prefix: clean, Spec: spec}, nil
}

// ParseMounts parses repeated --mount values into a table in order. Two
// values for the same prefix are an error.
func ParseMounts(values []string, baseDir string) (Table, error) {
	var t Table
	for _, v := range values {
		m, err := ParseMount(v, baseDir)
		if err != nil {
			return nil, err
		}
		if prev, dup := t.Lookup(m.Prefix); dup {
			return nil, &Error{Flag: v, Prefix: m.Prefix, fromFlag: true, Msg: fmt.Sprintf("prefix %s is already mounted by %s", m.Prefix, strings.TrimPrefix(prev.Spec.Origin, "--mount "))}
		}
		t = append(t, m)
	}
	return t, nil
}

// checkPrefix validates and cleans a mount prefix; msg says what is wrong.
func checkPrefix(prefix string) (clean, msg string) {
	switch {
	case prefix == "":
		return "", "missing prefix before '=': want an absolute path such as / or /repo"
	case prefix[0] != '/':
		return "", fmt.Sprintf("prefix %q is not absolute: want /%s", prefix, strings.TrimLeft(prefix, "./"))
	case strings.ContainsRune(prefix, 0):
		return "", "prefix contains a NUL byte"
	}
	return vfs.Clean(prefix), ""
}

// parseSpec parses the flag form KIND:ARG[?OPTIONS] of one tree. Errors are
// plain messages; callers add where the value was written.
func parseSpec(body, baseDir string) (Spec, error) {
	kind, arg, ok := strings.Cut(body, ":")
	if !ok {
		if info, known := kinds[body]; known && info.flag {
			return Spec{}, fmt.Errorf("missing ':' after the kind: want %s:", body)
		}
		return Spec{}, fmt.Errorf("missing KIND: want KIND:ARG with KIND one of %s", strings.Join(FlagKinds(), ", "))
	}
	info, known := kinds[kind]
	switch {
	case kind == "":
		return Spec{}, fmt.Errorf("missing KIND before ':': want one of %s", strings.Join(FlagKinds(), ", "))
	case !known:
		return Spec{}, fmt.Errorf("unknown kind %q (known: %s)", kind, strings.Join(FlagKinds(), ", "))
	case !info.flag:
		return Spec{}, fmt.Errorf("kind %s has no --mount form; write it in a --config file", kind)
	}
	if kind == KindHostfiles {
		return parseHostfiles(arg, baseDir)
	}
	var opts string
	if i := strings.LastIndexByte(arg, '?'); i >= 0 {
		arg, opts = arg[:i], arg[i+1:]
	}
	s := Spec{Kind: kind}
	switch kind {
	case KindTemp:
		if arg != "" {
			return Spec{}, fmt.Errorf("temp: takes no argument, got %q (seed files need a --config file)", arg)
		}
	case KindPlugin:
		return parsePluginFlag(s, arg, opts, baseDir)
	case KindLocal:
		dir, err := resolveDir(arg, baseDir)
		if err != nil {
			return Spec{}, err
		}
		s.Dir = dir
	}
	if err := applyOptions(&s, opts); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// applyOptions applies the comma-separated OPTION[=VALUE] list after '?'.
func applyOptions(s *Spec, opts string) error {
	if opts == "" {
		return nil
	}
	for _, o := range strings.Split(opts, ",") {
		key, value, _ := strings.Cut(o, "=")
		if key == "" {
			return fmt.Errorf("empty option in %q", "?"+opts)
		}
		apply, ok := options[key]
		if !ok {
			return fmt.Errorf("unknown option %q (known: %s)", key, optionNames())
		}
		if err := apply(s, value); err != nil {
			return err
		}
	}
	return nil
}

// resolveDir makes a local directory absolute against baseDir (expanding a
// leading ~) and checks that it is an existing directory.
func resolveDir(arg, baseDir string) (string, error) {
	if arg == "" {
		return "", errors.New("local: needs a directory, e.g. local:./src")
	}
	if strings.ContainsRune(arg, 0) {
		return "", errors.New("directory contains a NUL byte")
	}
	dir := arg
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand ~ in %s: %w", arg, err)
		}
		dir = filepath.Join(home, dir[1:])
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(baseDir, dir)
	}
	dir = filepath.Clean(dir)
	if err := checkDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// checkDir reports whether dir is an existing directory, as an error
// naming it.
func checkDir(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("directory %s: %w", dir, errors.Unwrap(err))
	case !info.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

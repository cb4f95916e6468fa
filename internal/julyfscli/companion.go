package julyfscli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Companion is the name of the executable that carries out the heavy
// commands (see Heavy).
const Companion = "julyfsd"

// delegatedEnv is set in julyfsd's environment by ExecCompanion. A julyfs
// that finds it set would be handing a command to itself (JULYFSD naming
// julyfs, say), which would loop: it fails instead.
const delegatedEnv = "JULYFS_DELEGATED"

// FindCompanion returns the path of julyfsd: $JULYFSD when set (it must
// exist), else julyfsd in the directory of this executable (where go
// install and go build -o DIR put both), else julyfsd on $PATH. what names
// the command for the error when none is found: "julyfs mount".
func FindCompanion(what string) (string, error) {
	if p := os.Getenv("JULYFSD"); p != "" {
		if err := isExecutable(p); err != nil {
			return "", fmt.Errorf("%s needs %s: JULYFSD=%s: %w", what, Companion, p, err)
		}
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), Companion)
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(Companion); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s needs %s, the companion that holds FUSE and the search index: "+
		"go install github.com/julyfs/julyfs/cmd/%s@latest (or set JULYFSD to its path)",
		what, Companion, Companion)
}

// isExecutable reports why p is not an executable file, or nil.
func isExecutable(p string) error {
	info, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case info.IsDir():
		return errors.New("is a directory")
	case info.Mode()&0o111 == 0:
		return fs.ErrPermission
	}
	return nil
}

// ExecCompanion replaces this process with julyfsd running the command
// line args (without the program name), so its stdio, signals (Ctrl-C
// unmounts a mount) and exit status are julyfs's. It returns only on
// failure: julyfsd not found, or the exec refused.
func ExecCompanion(what string, args []string) error {
	if os.Getenv(delegatedEnv) != "" {
		return fmt.Errorf("%s: this julyfs was started by julyfs to run it and cannot: "+
			"JULYFSD or the julyfsd found must be the julyfsd executable, not julyfs", what)
	}
	path, err := FindCompanion(what)
	if err != nil {
		return err
	}
	env := append(os.Environ(), delegatedEnv+"=1")
	err = syscall.Exec(path, append([]string{Companion}, args...), env)
	return fmt.Errorf("%s: exec %s: %w", what, path, err)
}

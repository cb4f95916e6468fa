package rootspec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/diskstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore"
)

// The hostfiles kind: durable host files in a store shared by processes
// and hosts (vfs/hostfiles). Its argument is the store, a directory (the
// embedded default, created when missing) or a postgres:// URL, and its
// option scope= is deployment (the default: shared across sessions),
// session (keyed by the session id the runner passes, or
// $JULYFS_SESSION_ID) or session:ID.
//
//	--mount /host=hostfiles:./state?scope=deployment
//	--mount /host=hostfiles:postgres://julyfs@127.0.0.1:5432/julyfs?scope=session
//	/host: { hostfiles: { url: "postgres://...", scope: session } }
//
// Options follow the last '?'; a URL with its own query keeps it when
// what follows the last '?' is not a list of known options
// (postgres://h/db?sslmode=disable), and takes options after it
// (postgres://h/db?sslmode=disable?scope=session).

// KindHostfiles names a hostfiles tree.
const KindHostfiles = "hostfiles"

// EnvSessionID is read for scope=session when the context carries no
// session id (see [WithSessionID]).
const EnvSessionID = "JULYFS_SESSION_ID"

type sessionKey struct{}

// WithSessionID returns ctx carrying the session id that hostfiles trees
// with scope=session built under it are keyed by.
func WithSessionID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// userinfo matches the user:password@ of a URL.
var userinfo = regexp.MustCompile(`(://[^:/@\s]*):[^@/\s]*@`)

// redactPassword replaces the password of any URL in s with xxxxx, for
// messages that echo a --mount value.
func redactPassword(s string) string { return userinfo.ReplaceAllString(s, "${1}:xxxxx@") }

func isPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// parseHostfiles parses the flag form's argument (after "hostfiles:").
func parseHostfiles(arg, baseDir string) (Spec, error) {
	s := Spec{Kind: KindHostfiles, Scope: string(hostfiles.Deployment)}
	store, opts := arg, ""
	if i := strings.LastIndexByte(arg, '?'); i >= 0 && knownOptions(arg[i+1:]) {
		store, opts = arg[:i], arg[i+1:]
	}
	if err := setHostfilesStore(&s, store, baseDir); err != nil {
		return Spec{}, err
	}
	for _, o := range strings.Split(opts, ",") {
		key, value, _ := strings.Cut(o, "=")
		switch {
		case o == "":
		case key == "scope":
			if err := setScope(&s, value); err != nil {
				return Spec{}, err
			}
		default:
			if err := applyOptions(&s, o); err != nil {
				return Spec{}, err
			}
		}
	}
	return s, nil
}

// knownOptions reports whether opts is a list of options a hostfiles spec
// takes, rather than part of a URL's query.
func knownOptions(opts string) bool {
	for _, o := range strings.Split(opts, ",") {
		key, _, _ := strings.Cut(o, "=")
		if _, ok := options[key]; !ok && key != "scope" && o != "" {
			return false
		}
	}
	return true
}

func setHostfilesStore(s *Spec, store, baseDir string) error {
	switch {
	case store == "":
		return errors.New("hostfiles: needs a store: a directory (hostfiles:./state) or a postgres:// URL")
	case strings.ContainsRune(store, 0):
		return errors.New("hostfiles store contains a NUL byte")
	case isPostgresURL(store):
		s.Store = store
		return nil
	case strings.Contains(store, "://"):
		return fmt.Errorf("hostfiles store %q: want a directory or a postgres:// URL", pgstore.Redact(store))
	}
	dir := store
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("cannot expand ~ in %s: %w", store, err)
		}
		dir = filepath.Join(home, dir[1:])
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(baseDir, dir)
	}
	s.Store = filepath.Clean(dir)
	return nil
}

func setScope(s *Spec, value string) error {
	switch {
	case value == string(hostfiles.Deployment), value == "session":
	case strings.HasPrefix(value, "session:"):
		if _, err := hostfiles.SessionScope(strings.TrimPrefix(value, "session:")); err != nil {
			return err
		}
	default:
		return fmt.Errorf("scope %q: want deployment, session or session:ID", value)
	}
	s.Scope = value
	return nil
}

// hostfiles decodes the value of a hostfiles: key in a config: a scalar
// store, or a mapping {url: STORE, scope: SCOPE}.
func (d *decoder) hostfiles(s *Spec, n *yaml.Node, name string) error {
	s.Scope = string(hostfiles.Deployment)
	fail := func(err error) error {
		return &Error{File: d.file, Line: n.Line, Prefix: name, Msg: err.Error(), Err: errors.Unwrap(err)}
	}
	switch {
	case n.Kind == yaml.ScalarNode && !isNull(n):
		if err := setHostfilesStore(s, n.Value, d.base); err != nil {
			return fail(err)
		}
		return nil
	case n.Kind != yaml.MappingNode:
		return d.errf(n, name, "hostfiles: wants a directory, a postgres:// URL or {url: ..., scope: ...}, got %s", describe(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode || isNull(v) {
			return d.errf(k, name, "hostfiles: want url: and scope: with text values")
		}
		var err error
		switch k.Value {
		case "url", "dir":
			err = setHostfilesStore(s, v.Value, d.base)
		case "scope":
			err = setScope(s, v.Value)
		default:
			return d.errf(k, name, "hostfiles: unknown key %q (keys: url, scope)", k.Value)
		}
		if err != nil {
			return &Error{File: d.file, Line: v.Line, Prefix: name, Msg: err.Error(), Err: errors.Unwrap(err)}
		}
	}
	if s.Store == "" {
		return d.errf(n, name, "hostfiles: needs url: (a directory or a postgres:// URL)")
	}
	return nil
}

// hostfilesArg renders the store without any password, and the scope.
func (s Spec) hostfilesArg() string {
	store := s.Store
	if isPostgresURL(store) {
		store = pgstore.Redact(store)
	}
	return store + "?scope=" + s.Scope
}

// hostfilesString is String for a hostfiles spec: options joined after
// the one '?'.
func (s Spec) hostfilesString() string {
	if s.ReadOnly {
		return s.Source() + ",ro"
	}
	return s.Source()
}

// openHostfiles opens the store of s and returns the tree of its scope;
// the store is closed with the root.
func (r *Root) openHostfiles(ctx context.Context, s Spec) (vfs.FileSystem, error) {
	scope := hostfiles.Scope(s.Scope)
	switch {
	case s.Scope == "session":
		id, _ := ctx.Value(sessionKey{}).(string)
		if id == "" {
			id = os.Getenv(EnvSessionID)
		}
		if id == "" {
			return nil, fmt.Errorf("hostfiles scope=session needs a session id: agents get theirs from the runner; elsewhere set %s or use scope=session:ID", EnvSessionID)
		}
		sc, err := hostfiles.SessionScope(id)
		if err != nil {
			return nil, err
		}
		scope = sc
	case strings.HasPrefix(s.Scope, "session:"):
		sc, err := hostfiles.SessionScope(strings.TrimPrefix(s.Scope, "session:"))
		if err != nil {
			return nil, err
		}
		scope = sc
	}
	var (
		store hostfiles.Store
		err   error
	)
	if isPostgresURL(s.Store) {
		store, err = pgstore.Open(ctx, s.Store, pgstore.Options{})
	} else {
		store, err = diskstore.Open(s.Store, diskstore.Options{})
	}
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, store)
	return hostfiles.New(store, scope)
}

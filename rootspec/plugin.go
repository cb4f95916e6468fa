package rootspec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/vfs"
)

// KindPlugin is a tree served by a plugin binary (package plugins).
const KindPlugin = "plugin"

func init() {
	kinds[KindPlugin] = kindInfo{flag: true, usage: "plugin:PATH?KEY=VALUE&... (a backend plugin binary)"}
}

// PluginSpec is the argument of a plugin tree.
type PluginSpec struct {
	// Path is the binary: a path with a slash (relative to Dir), or a
	// name found beside julyfs or on $PATH.
	Path string
	// Args are the plugin's parameters.
	Args map[string]string
	// SHA256 pins the binary to this hex digest, when set.
	SHA256 string
	// Dir is where the spec was written (the working directory of a flag,
	// the directory of a config file): the plugin runs there, so its
	// relative parameters mean what they say.
	Dir string
}

// arg renders PATH?KEY=VALUE&... with the keys sorted.
func (p *PluginSpec) arg() string {
	if p == nil {
		return ""
	}
	var q []string
	for _, k := range slices.Sorted(maps.Keys(p.Args)) {
		q = append(q, url.QueryEscape(k)+"="+url.QueryEscape(p.Args[k]))
	}
	if p.SHA256 != "" {
		q = append(q, "sha256="+p.SHA256)
	}
	if len(q) == 0 {
		return p.Path
	}
	return p.Path + "?" + strings.Join(q, "&")
}

// parsePluginFlag parses plugin:PATH?KEY=VALUE&...: sha256 pins the
// binary, ro and readonly are the usual options, every other key is the
// plugin's.
func parsePluginFlag(s Spec, arg, opts, baseDir string) (Spec, error) {
	if arg == "" {
		return Spec{}, errors.New("plugin: needs a binary, e.g. plugin:julyfs-git?repo=.&ref=main")
	}
	p := &PluginSpec{Path: arg, Dir: baseDir}
	if opts != "" {
		for _, kv := range strings.Split(opts, "&") {
			k, v, _ := strings.Cut(kv, "=")
			key, err := url.QueryUnescape(k)
			if err != nil || key == "" {
				return Spec{}, fmt.Errorf("plugin: bad parameter %q", kv)
			}
			val, err := url.QueryUnescape(v)
			if err != nil {
				return Spec{}, fmt.Errorf("plugin: bad value in %q: %v", kv, err)
			}
			if err := p.set(&s, key, val); err != nil {
				return Spec{}, err
			}
		}
	}
	s.Plugin = p
	return s, nil
}

// set applies one parameter.
func (p *PluginSpec) set(s *Spec, key, val string) error {
	switch key {
	case "sha256":
		p.SHA256 = val
		return nil
	case "ro", "readonly":
		return setReadOnly(s, val)
	}
	if _, dup := p.Args[key]; dup {
		return fmt.Errorf("plugin: parameter %s given twice", key)
	}
	if p.Args == nil {
		p.Args = map[string]string{}
	}
	p.Args[key] = val
	return nil
}

// plugin decodes `plugin: PATH` or `plugin: {path: PATH, args: {...},
// sha256: HEX}` in a config file.
func (d *decoder) plugin(n *yaml.Node, name string) (*PluginSpec, error) {
	p := &PluginSpec{Dir: d.base}
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		p.Path = n.Value
	} else if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
			switch k.Value {
			case "path", "sha256":
				if v.Kind != yaml.ScalarNode || isNull(v) {
					return nil, d.errf(v, name, "plugin: %s wants a string, got %s", k.Value, describe(v))
				}
				if k.Value == "path" {
					p.Path = v.Value
				} else {
					p.SHA256 = v.Value
				}
			case "args":
				if isNull(v) {
					continue
				}
				if v.Kind != yaml.MappingNode {
					return nil, d.errf(v, name, "plugin: args wants a mapping of parameter to value, got %s", describe(v))
				}
				p.Args = map[string]string{}
				for j := 0; j+1 < len(v.Content); j += 2 {
					ak, av := resolve(v.Content[j]), resolve(v.Content[j+1])
					if ak.Kind != yaml.ScalarNode || av.Kind != yaml.ScalarNode {
						return nil, d.errf(ak, name, "plugin: args: want scalar keys and values")
					}
					p.Args[ak.Value] = av.Value
				}
			default:
				return nil, d.errf(k, name, "plugin: unknown key %q (known: path, args, sha256)", k.Value)
			}
		}
	}
	if p.Path == "" {
		return nil, d.errf(n, name, "plugin: wants a binary: plugin: julyfs-git or {path: julyfs-git, args: {repo: .}}")
	}
	return p, nil
}

// PluginOpener starts the plugin of p and returns its tree and what
// stops it. When seeded, the tree must hold exactly seed (conformance
// checks; see ErrPluginNoSeed).
type PluginOpener func(ctx context.Context, p PluginSpec, seeded bool, seed map[string][]byte) (vfs.FileSystem, io.Closer, error)

var pluginOpener PluginOpener

// RegisterPluginOpener installs what opens plugin trees. Package
// plugins/pluginkind calls it from init: a binary that imports it can
// open plugin: mounts. rootspec itself does not link the plugin machinery
// (gRPC and go-plugin would cost every julyfs run ~10 ms of start-up).
func RegisterPluginOpener(f PluginOpener) { pluginOpener = f }

// PluginChecker checks a plugin mount without running its plugin (the
// binary is there and executable, a pinned digest matches).
type PluginChecker func(p PluginSpec) error

var pluginChecker PluginChecker

// RegisterPluginChecker installs what [Table.CheckPlugins] uses; package
// plugins/pluginkind calls it from init.
func RegisterPluginChecker(f PluginChecker) { pluginChecker = f }

// CheckPlugins checks each plugin mount of t without starting its plugin
// (what july validate does, since binding a tree no longer fails for a
// plugin that cannot start): one error per mount whose binary is missing
// or not executable or does not match its sha256, naming where the mount
// was written and the mount. A program without plugin support checks
// nothing.
func (t Table) CheckPlugins() []error {
	if pluginChecker == nil {
		return nil
	}
	var errs []error
	var walk func(at string, s Spec)
	walk = func(at string, s Spec) {
		switch s.Kind {
		case KindPlugin:
			if s.Plugin == nil {
				return
			}
			if err := pluginChecker(*s.Plugin); err != nil {
				errs = append(errs, s.wrap(fmt.Errorf("mount %s: %w", at, err)))
			}
		case KindOverlay:
			for _, l := range s.Layers {
				walk(at, l)
			}
		case KindUnion:
			for _, m := range s.Mounts {
				walk(path.Join(at, m.Prefix), m.Spec)
			}
		}
	}
	for _, m := range t {
		walk(path.Join("/", m.Prefix), m.Spec)
	}
	return errs
}

// PluginsAvailable reports whether this binary can open plugin: mounts.
func PluginsAvailable() bool { return pluginOpener != nil }

// ErrNoPluginSupport is the error of opening a plugin: mount in a binary
// without plugins/pluginkind.
var ErrNoPluginSupport = errors.New("this program cannot run plugins (it does not link plugins/pluginkind)")

// ErrPluginNoSeed is the error of a seeded open of a plugin that cannot
// build a tree from given files.
var ErrPluginNoSeed = errors.New("the plugin cannot build a tree from given files")

// NeedsPlugins reports whether the table mounts a plugin anywhere.
func (t Table) NeedsPlugins() bool {
	for _, m := range t {
		if m.Spec.needsPlugins() {
			return true
		}
	}
	return false
}

func (s Spec) needsPlugins() bool {
	if s.Kind == KindPlugin {
		return true
	}
	for _, l := range s.Layers {
		if l.needsPlugins() {
			return true
		}
	}
	return s.Mounts.NeedsPlugins()
}

// OpenSeeded starts the plugin of p with a fresh tree holding exactly
// files (what julyfs conformance checks read-only plugins with).
func (p PluginSpec) OpenSeeded(ctx context.Context, files map[string][]byte) (vfs.FileSystem, io.Closer, error) {
	if pluginOpener == nil {
		return nil, nil, ErrNoPluginSupport
	}
	return pluginOpener(ctx, p, true, files)
}

// openPlugin starts the plugin of s.
func (r *Root) openPlugin(ctx context.Context, s Spec) (vfs.FileSystem, error) {
	p := s.Plugin
	if p == nil {
		return nil, errors.New("plugin: no binary")
	}
	if pluginOpener == nil {
		return nil, ErrNoPluginSupport
	}
	fsys, closer, err := pluginOpener(ctx, *p, false, nil)
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, closer)
	if d, ok := fsys.(interface{ StartErr() error }); ok {
		if err := d.StartErr(); err != nil {
			at := r.at
			if at == "" {
				at = "/"
			}
			warn(ctx, s.wrap(fmt.Errorf("mount %s: %w (the mount is bound; its calls answer this error until the plugin starts, which each call tries again after a backoff)", at, err)).Error())
		}
	}
	return fsys, nil
}

type callTimeoutKey struct{}

type callTimeout struct {
	d    time.Duration
	hint string
}

// WithPluginCallTimeout returns ctx carrying d, the bound on each call of
// the plugin trees [Table.Open] and [PluginSpec.OpenSeeded] open with it
// (plugins.Config.CallTimeout: a call the plugin does not answer within d
// fails with "no answer within d (hint)"); 0 is no bound. The one-shot
// julyfs verbs set it (--plugin-timeout); a mount does not.
func WithPluginCallTimeout(ctx context.Context, d time.Duration, hint string) context.Context {
	return context.WithValue(ctx, callTimeoutKey{}, callTimeout{d, hint})
}

// PluginCallTimeout returns what [WithPluginCallTimeout] put in ctx.
func PluginCallTimeout(ctx context.Context) (time.Duration, string) {
	t, _ := ctx.Value(callTimeoutKey{}).(callTimeout)
	return t.d, t.hint
}

type warnKey struct{}

// WithWarn returns ctx carrying f, which [Table.Open] and [Spec.Open]
// call with each warning of binding the tree: a plugin mount bound
// although its plugin could not start (its calls answer the start error).
// Without it each warning goes to standard error as one line
// "warning: MSG".
func WithWarn(ctx context.Context, f func(msg string)) context.Context {
	return context.WithValue(ctx, warnKey{}, f)
}

func warn(ctx context.Context, msg string) {
	msg = escapeControl(msg)
	if f, ok := ctx.Value(warnKey{}).(func(string)); ok && f != nil {
		f(msg)
		return
	}
	fmt.Fprintln(os.Stderr, "warning: "+msg)
}

// escapeControl quotes the control characters of s (a path may hold
// them) so the warning stays one line.
func escapeControl(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

package mcpclient

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ServerConfig is one server under agent.yaml's mcp:, either a command
// (stdio) or a url (streamable HTTP). Every string may name environment
// variables as ${VAR}; they are expanded when the server starts.
type ServerConfig struct {
	// Command is the server's argv, run with the agent directory as its
	// working directory and connected over stdin and stdout.
	Command []string `yaml:"command"`
	// Env is added to the command's environment (july's own, plus these).
	Env map[string]string `yaml:"env"`
	// URL is a streamable HTTP endpoint (http or https).
	URL string `yaml:"url"`
	// Headers are sent with every HTTP request to URL.
	Headers map[string]string `yaml:"headers"`
	// StartTimeout bounds starting the server and listing its tools
	// (default DefaultStartTimeout).
	StartTimeout time.Duration `yaml:"startTimeout"`
	// CallTimeout bounds one tool call (default DefaultCallTimeout).
	CallTimeout time.Duration `yaml:"callTimeout"`
	// MaxMessageBytes bounds one message from the server (default
	// DefaultMaxMessageBytes). A longer message fails the connection.
	MaxMessageBytes int `yaml:"maxMessageBytes"`
}

// The defaults of a ServerConfig's bounds.
const (
	DefaultStartTimeout    = 30 * time.Second
	DefaultCallTimeout     = 5 * time.Minute
	DefaultMaxMessageBytes = 16 << 20
)

func (c ServerConfig) startTimeout() time.Duration {
	if c.StartTimeout > 0 {
		return c.StartTimeout
	}
	return DefaultStartTimeout
}

func (c ServerConfig) callTimeout() time.Duration {
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return DefaultCallTimeout
}

func (c ServerConfig) maxMessage() int {
	if c.MaxMessageBytes > 0 {
		return c.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

// serverName is what a server may be called: the model-facing name
// mcp__<server>__<tool> must pass every provider's tool-name rule
// (^[a-zA-Z0-9_-]{1,64}$), and the server part may not hold "__".
var serverName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]*$`)

// toolName is the model providers' rule for a tool's name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// varRef is one ${VAR} reference.
var varRef = regexp.MustCompile(`\$\{([^}]*)\}`)

// envName is a valid variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Check returns what is wrong with the server called name, each a
// sentence saying how to fix it. It does not start the server or read
// the environment.
func Check(name string, c ServerConfig) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if !serverName.MatchString(name) || strings.Contains(name, "__") {
		add("server name %q: use letters, digits, - and single _ (the tools are named mcp__<server>__<tool>)", name)
	}
	switch {
	case len(c.Command) > 0 && c.URL != "":
		add("set command (stdio) or url (streamable HTTP), not both")
	case len(c.Command) == 0 && c.URL == "":
		add("set command: [argv...] (stdio) or url: (streamable HTTP)")
	case len(c.Command) > 0:
		if strings.TrimSpace(c.Command[0]) == "" {
			add("command: the program (its first word) is empty")
		}
		if len(c.Headers) > 0 {
			add("headers: only a url server sends headers; use env: for a command")
		}
	default:
		if len(c.Env) > 0 {
			add("env: only a command server gets an environment; use headers: for a url")
		}
		if !strings.Contains(c.URL, "${") {
			if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				add("url %q: want an http or https URL", c.URL)
			}
		}
	}
	for _, s := range c.strings() {
		for _, m := range varRef.FindAllStringSubmatch(s, -1) {
			if !envName.MatchString(m[1]) {
				add("%q is not a variable reference: write ${NAME} with letters, digits and _", m[0])
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		if !envName.MatchString(k) {
			add("env: %q is not a variable name", k)
		}
	}
	if c.StartTimeout < 0 || c.CallTimeout < 0 || c.MaxMessageBytes < 0 {
		add("startTimeout, callTimeout and maxMessageBytes may not be negative")
	}
	return out
}

// strings returns every string of c that may hold ${VAR}.
func (c ServerConfig) strings() []string {
	out := slices.Clone(c.Command)
	out = append(out, c.URL)
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		out = append(out, c.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		out = append(out, c.Headers[k])
	}
	return out
}

// expander expands ${VAR} from an environment and remembers every value
// it put in, so errors can be redacted.
type expander struct {
	lookup  func(string) (string, bool)
	secrets []string
}

// minSecret is the shortest expanded value redact hides: shorter values
// (a port, "1") would mangle every message and hide nothing secret.
const minSecret = 4

func (e *expander) expand(field, s string) (string, error) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v, ok := e.lookup(name)
		if !ok {
			missing = append(missing, name)
			return ""
		}
		if len(v) >= minSecret {
			e.secrets = append(e.secrets, v)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%s: ${%s} is not set in july's environment", field, strings.Join(missing, "}, ${"))
	}
	return out, nil
}

// redact replaces every expanded value in s with [redacted].
func (e *expander) redact(s string) string {
	for _, v := range e.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

// resolved is a ServerConfig with its variables expanded.
type resolved struct {
	command []string
	env     []string // KEY=VALUE, added to july's environment
	url     string
	headers map[string]string
}

func (c ServerConfig) resolve(e *expander) (*resolved, error) {
	r := &resolved{}
	for i, a := range c.Command {
		v, err := e.expand(fmt.Sprintf("command[%d]", i), a)
		if err != nil {
			return nil, err
		}
		r.command = append(r.command, v)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		v, err := e.expand("env "+k, c.Env[k])
		if err != nil {
			return nil, err
		}
		r.env = append(r.env, k+"="+v)
	}
	var err error
	if r.url, err = e.expand("url", c.URL); err != nil {
		return nil, err
	}
	if len(c.Headers) > 0 {
		r.headers = map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
			if r.headers[k], err = e.expand("headers "+k, c.Headers[k]); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

package runner

import (
	"fmt"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/model/anthropic"
	"github.com/julyfs/julyfs/runner/model/openai"
	"github.com/julyfs/julyfs/runner/model/script"
)

// ResolveModel returns the model spec names ("script:FILE",
// "openai:NAME", "anthropic:NAME", or a bare name whose provider its prefix
// tells; see model.ParseSpec). Relative script files resolve against
// opts.Dir.
func ResolveModel(spec string, opts model.Options) (model.Model, error) {
	provider, name, _, err := model.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	switch provider {
	case script.Provider:
		return script.New(name, opts)
	case "openai":
		return openai.New(name, opts)
	case "anthropic":
		return anthropic.New(name, opts)
	}
	return nil, fmt.Errorf("model %s: unknown provider %q", spec, provider)
}

// DescribeModel says what a model spec resolves to, for july validate:
// "anthropic:claude-sonnet-4-5 (provider inferred from the name)".
func DescribeModel(spec string) (string, error) {
	provider, name, inferred, err := model.ParseSpec(spec)
	if err != nil {
		return "", err
	}
	if inferred {
		return fmt.Sprintf("%s:%s (provider inferred from the name %s)", provider, name, name), nil
	}
	return provider + ":" + name, nil
}

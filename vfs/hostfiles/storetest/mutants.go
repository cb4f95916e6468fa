package storetest

import (
	"context"
	"errors"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
)

// Mutants returns the broken wrappers of a store by name, each breaking
// one rule, with the check that must catch it, so a store's tests can
// prove the suite has teeth (run the suite over Mutant(name, store) and
// expect the named check to fail). The map is the caller's:
//
//   - "nocas": Put ignores its precondition (a lost update);
//   - "noetags": a refused write's *ConflictError carries no etags;
//   - "nofeed": Watch reports nothing;
//   - "nodeletecas": Delete ignores its precondition (a delete drops
//     another writer's change).
func Mutants() map[string]string {
	return map[string]string{
		"nocas":       "ConflictCarriesBothETags",
		"noetags":     "ConflictCarriesBothETags",
		"nofeed":      "CrossHostNotify",
		"nodeletecas": "DeleteIsCAS",
	}
}

// Mutant wraps s with the mutation name (see [Mutants]).
func Mutant(name string, s hostfiles.Store) hostfiles.Store { return mutant{s, name} }

type mutant struct {
	hostfiles.Store
	name string
}

func (m mutant) Put(ctx context.Context, sc hostfiles.Scope, key string, data []byte, cond vfs.Precondition) (hostfiles.Meta, error) {
	if m.name == "nocas" {
		cond = vfs.Precondition{}
	}
	meta, err := m.Store.Put(ctx, sc, key, data, cond)
	var ce *hostfiles.ConflictError
	if m.name == "noetags" && errors.As(err, &ce) {
		return meta, &hostfiles.ConflictError{Key: ce.Key}
	}
	return meta, err
}

func (m mutant) Delete(ctx context.Context, sc hostfiles.Scope, key string, cond vfs.Precondition) error {
	if m.name == "nodeletecas" {
		cond = vfs.Precondition{}
	}
	return m.Store.Delete(ctx, sc, key, cond)
}

func (m mutant) Watch(sc hostfiles.Scope, fn func(hostfiles.Event)) func() {
	if m.name == "nofeed" {
		return func() {}
	}
	return m.Store.Watch(sc, fn)
}

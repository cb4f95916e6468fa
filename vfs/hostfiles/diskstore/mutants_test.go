package diskstore_test

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/diskstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/storetest"
)

const envMutant = "DISKSTORE_MUTANT"

// TestSuiteCatches runs the store suite over each mutant of the disk
// store in a child process and checks that the check the mutant breaks
// fails: the suite has teeth.
func TestSuiteCatches(t *testing.T) {
	for name, check := range storetest.Mutants() {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMutantSuite$", "-test.v")
			cmd.Env = append(os.Environ(), envMutant+"="+name)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the suite passed over mutant %s:\n%s", name, out)
			assert.Contains(t, string(out), "--- FAIL: TestMutantSuite/"+check, "mutant %s", name)
		})
	}
}

// TestMutantSuite is the child of TestSuiteCatches; it runs only there.
func TestMutantSuite(t *testing.T) {
	name := os.Getenv(envMutant)
	if name == "" {
		t.Skip("run by TestSuiteCatches")
	}
	dir := t.TempDir()
	n := 0
	storetest.Run(t, storetest.Options{
		Open: func(t *testing.T) hostfiles.Store {
			s, err := diskstore.Open(dir, diskstore.Options{MaxFileSize: 4096})
			require.NoError(t, err)
			return storetest.Mutant(name, s)
		},
		Scope: func(t *testing.T) hostfiles.Scope {
			n++
			return hostfiles.Scope("m" + strconv.Itoa(n))
		},
		MaxFileSize: 4096,
	})
}

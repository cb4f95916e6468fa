//go:build amd64 && !purego

package grepscan

import "golang.org/x/sys/cpu"

// pairAVX2 reports whether pairMask32 may run: literals are then searched
// for as a pair of bytes, thirty-two candidate starts per instruction.
var pairAVX2 = cpu.X86.HasAVX2

// pairMask32 tests blocks blocks of 32 candidate starts: start i passes
// when pa[i]|fa == ca and pb[i]|fb == cb. It returns the byte offset of
// the first block with a passing start and the mask of its passing
// starts (bit j: start off+j), or off -1 when no start passes. pa and pb
// must have blocks*32 readable bytes.
//
//go:noescape
func pairMask32(pa, pb *byte, blocks int, ca, cb, fa, fb byte) (off int, mask uint32)

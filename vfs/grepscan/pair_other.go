//go:build !amd64 || purego

package grepscan

// pairAVX2 is false where pairMask32 has no assembly: the portable
// search runs instead.
const pairAVX2 = false

func pairMask32(pa, pb *byte, blocks int, ca, cb, fa, fb byte) (off int, mask uint32) {
	panic("grepscan: pairMask32 without AVX2")
}

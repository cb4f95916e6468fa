//go:build amd64 && !purego

#include "textflag.h"

// func pairMask32(pa, pb *byte, blocks int, ca, cb, fa, fb byte) (off int, mask uint32)
TEXT ·pairMask32(SB), NOSPLIT, $0-44
	MOVQ    pa+0(FP), SI
	MOVQ    pb+8(FP), DI
	MOVQ    blocks+16(FP), CX
	MOVBLZX ca+24(FP), AX
	MOVQ    AX, X0
	VPBROADCASTB X0, Y0
	MOVBLZX cb+25(FP), AX
	MOVQ    AX, X1
	VPBROADCASTB X1, Y1
	MOVBLZX fa+26(FP), AX
	MOVQ    AX, X2
	VPBROADCASTB X2, Y2
	MOVBLZX fb+27(FP), AX
	MOVQ    AX, X3
	VPBROADCASTB X3, Y3
	XORQ    BX, BX
	CMPQ    CX, $2
	JLT     single

pair:
	// Two blocks per round: 64 starts.
	VMOVDQU (SI)(BX*1), Y4
	VMOVDQU (DI)(BX*1), Y5
	VMOVDQU 32(SI)(BX*1), Y6
	VMOVDQU 32(DI)(BX*1), Y7
	VPOR    Y2, Y4, Y4
	VPOR    Y3, Y5, Y5
	VPOR    Y2, Y6, Y6
	VPOR    Y3, Y7, Y7
	VPCMPEQB Y0, Y4, Y4
	VPCMPEQB Y1, Y5, Y5
	VPCMPEQB Y0, Y6, Y6
	VPCMPEQB Y1, Y7, Y7
	VPAND   Y4, Y5, Y4
	VPAND   Y6, Y7, Y6
	VPOR    Y4, Y6, Y8
	VPTEST  Y8, Y8
	JNZ     pairfound
	ADDQ    $64, BX
	SUBQ    $2, CX
	CMPQ    CX, $2
	JGE     pair
	JMP     single

pairfound:
	VPMOVMSKB Y4, DX
	TESTL   DX, DX
	JNZ     found
	ADDQ    $32, BX
	VPMOVMSKB Y6, DX
	JMP     found

single:
	TESTQ   CX, CX
	JEQ     notfound
	VMOVDQU (SI)(BX*1), Y4
	VMOVDQU (DI)(BX*1), Y5
	VPOR    Y2, Y4, Y4
	VPOR    Y3, Y5, Y5
	VPCMPEQB Y0, Y4, Y4
	VPCMPEQB Y1, Y5, Y5
	VPAND   Y4, Y5, Y4
	VPMOVMSKB Y4, DX
	TESTL   DX, DX
	JNZ     found

notfound:
	VZEROUPPER
	MOVQ    $-1, off+32(FP)
	MOVL    $0, mask+40(FP)
	RET

found:
	VZEROUPPER
	MOVQ    BX, off+32(FP)
	MOVL    DX, mask+40(FP)
	RET

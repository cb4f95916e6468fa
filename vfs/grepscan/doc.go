// Package grepscan is the grep engine behind every tree's Grep: it
// compiles a pattern into a [Matcher] and scans files for matching lines
// with [Scan]. Trees reach it through vfs (vfs.Grep, the fallback for any
// tree, and the helpers vfs/local and vfs/temp use to hand it their
// files); it knows nothing of paths, trees or the contract's errors.
//
// # Matching
//
// A [Matcher] never runs the regexp once per line. A literal every match
// must contain (found with regexp/syntax, literal.go) is located with a
// byte scan: by its rarest byte with bytes.IndexByte, or by its two
// rarest bytes at once, thirty-two candidate starts per AVX2 instruction
// on amd64 (pair_amd64.s) and sixteen with SWAR elsewhere. Only the line
// around a candidate is then checked, and not even that when the pattern
// is nothing but its literals. A literal-free pattern runs through a
// lazily built line DFA (dfa.go) that walks four regions of a buffer at
// once; a pattern too large for it falls back to the regexp package.
// Case-insensitive literals are found without lowering the buffer.
//
// # Scanning
//
// [Scan] takes [File]s in path order and scans them on GOMAXPROCS
// workers, each with a reused buffer, and yields [Hit]s in path then line
// order (scan.go). A file is either loaded whole (File.Load) or opened
// and streamed in 256 KiB pieces of whole lines (File.Open, stream.go); a
// line longer than a piece is matched a window at a time when hits' lines
// are cut ([Limits].MaxLineBytes), so memory never holds it whole.
//
// # Long lines
//
// With [Limits].MaxLineBytes set, a streamed file is read in 256 KiB
// pieces of whole lines, and a line longer than a piece is matched a
// window at a time and never held whole: only the first MaxLineBytes
// (plus four) bytes of it are kept, for the hit. A loaded file is scanned
// in place and its hit copies only the cut line. So a scan's memory is the
// window, the cut lines and the matcher's cache, per worker, whatever the
// file: a 64 MiB line costs a streamed scan 0.3 MB of allocation and a
// loaded one 13 KB.
//
// Matching stays exact: the line DFA carries its state from one window to
// the next (a UTF-8 sequence cut by a window is carried whole into the
// next, and '^', '$' and \b see only the line's real ends), and when its
// cache of states fills, it starts a new cache from the state it is in, as
// RE2's DFA does, so it never gives up on a line. A pattern too large for
// the DFA (over 5,000 instructions) runs through the regexp package's NFA
// over the line's runes (Regexp.MatchReader), which keeps no input either.
// The cost is speed, not answers: a long line is walked by one DFA cursor,
// not the literal prefilter and four cursors, and a pattern whose DFA
// keeps restarting its cache goes at NFA speed. There is no overlap window
// whose size a match could exceed. Without MaxLineBytes a hit carries its
// whole line, so a streamed scan grows its buffer to the longest line.
//
// # Errors
//
// A File's loader decides what a failed load means: it returns
// [SkipFile] (or an error wrapping it) to have the file skipped, any
// other error to end the stream with it. A read that fails part-way
// through an opened file ends the stream with a [*ReadError]. A file
// holding a NUL byte is binary and skipped. Compile returns the regexp
// package's error; vfs turns it into the contract's "invalid grep
// pattern" error.
//
// # Concurrency
//
// A Matcher is safe for concurrent use: each scanning goroutine takes its
// own DFA cache from a pool. Scan stops every worker and its source
// before it returns when the consumer stops early.
package grepscan

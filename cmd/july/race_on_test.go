//go:build race

package main

// raceEnabled: the race detector multiplies memory, so RSS bounds are not checked.
const raceEnabled = true

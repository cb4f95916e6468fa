//go:build ignore

package main

import "fmt"

func main() {
	fmt.Println("hello from the project")
	// TODO: read the greeting from /docs/greeting.md
}

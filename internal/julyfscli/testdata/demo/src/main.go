// Command notes serves short notes over HTTP.
package main

import (
	"fmt"
	"log"
	"net/http"

	"example.com/notes/store"
)

func main() {
	s := store.New(100)
	http.HandleFunc("/notes", func(w http.ResponseWriter, r *http.Request) {
		for _, n := range s.All() {
			fmt.Fprintln(w, n)
		}
	})
	// TODO: add a handler that creates notes.
	log.Fatal(http.ListenAndServe(":8080", nil))
}

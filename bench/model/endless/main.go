// Command endless is a model server that never finishes: it answers
// every Chat Completions (POST /v1/chat/completions) or Messages
// (POST /v1/messages) request with an event stream of text, or of one
// tool call's arguments, that goes on until the client hangs up, or with
// the stream's headers and then nothing. It is for measuring what such a
// server costs july run:
//
//	go run ./bench/model/endless -addr 127.0.0.1:8089 -mode text &
//	OPENAI_BASE_URL=http://127.0.0.1:8089/v1 OPENAI_API_KEY=x \
//	  /usr/bin/time -v july run examples/notes --model openai:m -m hi
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8089", "listen on `ADDR`")
	mode := flag.String("mode", "text", "what to stream: text, args (one tool call's arguments) or stall")
	flag.Parse()
	piece := strings.Repeat("x", 2000)
	http.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		first := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
		next := fmt.Sprintf(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", piece)
		if *mode == "args" {
			first += `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Read","arguments":""}}]},"finish_reason":null}]}` + "\n\n"
			next = fmt.Sprintf(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":%q}}]},"finish_reason":null}]}`+"\n\n", piece)
		}
		serve(w, r, *mode, first, next)
	})
	http.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		first := `event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}` + "\n\n"
		var next string
		if *mode == "args" {
			first += "event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}` + "\n\n"
			next = "event: content_block_delta\n" + fmt.Sprintf(`data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%q}}`, piece) + "\n\n"
		} else {
			first += "event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n"
			next = "event: content_block_delta\n" + fmt.Sprintf(`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, piece) + "\n\n"
		}
		serve(w, r, *mode, first, next)
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}

func serve(w http.ResponseWriter, r *http.Request, mode, first, next string) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if mode == "stall" {
		<-r.Context().Done()
		return
	}
	var sent int64
	if _, err := io.WriteString(w, first); err != nil {
		return
	}
	for r.Context().Err() == nil {
		n, err := io.WriteString(w, next)
		if err != nil {
			log.Printf("client went away after %d MiB", sent>>20)
			return
		}
		sent += int64(n)
	}
}

package httpapi

import (
	"encoding/json"
	"net/http"
	"time"
)

// accessEntry is one line of the access log.
type accessEntry struct {
	Time     time.Time `json:"time"`
	Remote   string    `json:"remote"`
	Method   string    `json:"method"`
	Path     string    `json:"path"`
	Status   int       `json:"status"`
	Bytes    int64     `json:"bytes"`
	Duration float64   `json:"durationMs"`
}

// recorder notes a response's status and size; it passes Flush and
// deadlines through (http.ResponseController finds them via Unwrap).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logged writes one JSON line per request to the access log, once the
// response is done (a stream: when it ends).
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		e := accessEntry{Time: start.UTC(), Remote: r.RemoteAddr, Method: r.Method, Path: r.URL.Path,
			Status: rec.status, Bytes: rec.bytes, Duration: float64(time.Since(start).Microseconds()) / 1000}
		line, _ := json.Marshal(e)
		s.logMu.Lock()
		s.opts.AccessLog.Write(append(line, '\n'))
		s.logMu.Unlock()
	})
}

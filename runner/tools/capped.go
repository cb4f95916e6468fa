package tools

import "sync"

// Capped is an io.Writer that keeps the first Max bytes written to it in
// Buf and counts every byte in Total: the bounded capture of a command's
// output (Shell, authored tools). Safe for concurrent writes; read Buf
// and Total once the writers are done.
type Capped struct {
	Max   int
	Buf   []byte
	Total int

	mu sync.Mutex
}

func (c *Capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Total += len(p)
	if room := c.Max - len(c.Buf); room > 0 {
		c.Buf = append(c.Buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

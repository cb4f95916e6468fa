package mcpclient

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkStart starts one server and three servers as a session's Set
// does (in parallel), up to their tool lists: the test-binary server
// after a fixed 300 ms sleep (a start that does not use the CPU), and
// npm's server-everything (node, whose start is CPU-bound). Besides the
// wall time per Set it reports, per Set, the slowest server's own start
// (max-ms) and the sum of the servers' starts (sum-ms): a parallel start
// takes about max-ms, a serial one sum-ms.
func BenchmarkStart(b *testing.B) {
	for _, srv := range []struct {
		name string
		cfg  func() ServerConfig
	}{
		{"sleep300ms", func() ServerConfig {
			c := selfServer(b, "serve")
			c.Env["TEST_START_SLEEP"] = "300ms"
			return c
		}},
		{"everything", func() ServerConfig { return everything(b) }},
	} {
		for _, n := range []int{1, 3} {
			b.Run(fmt.Sprintf("%s/servers=%d", srv.name, n), func(b *testing.B) {
				servers := map[string]ServerConfig{}
				for i := range n {
					servers[fmt.Sprint("s", i)] = srv.cfg()
				}
				var maxSum, sumSum time.Duration
				for b.Loop() {
					set := NewSet(servers, Options{})
					_, status := set.Tools(context.Background())
					var longest, sum time.Duration
					for _, st := range status {
						if st.Err != nil {
							b.Fatal(st.Err)
						}
						longest, sum = max(longest, st.Took), sum+st.Took
					}
					maxSum, sumSum = maxSum+longest, sumSum+sum
					b.StopTimer()
					set.Close()
					b.StartTimer()
				}
				b.ReportMetric(float64(maxSum.Milliseconds())/float64(b.N), "max-ms")
				b.ReportMetric(float64(sumSum.Milliseconds())/float64(b.N), "sum-ms")
			})
		}
	}
}

// Package web holds the harness's web tools: WebFetch (a page as text)
// and WebSearch (a search backend's results), and the spill that writes
// their large output to the harness's {cwd}/agent-tools/{uuid}.txt.
//
// # Fetching
//
// [Fetcher.Fetch] GETs an http or https URL, follows at most MaxRedirects
// redirects (each one checked again), reads at most MaxBytes of the body
// (a larger body is cut and the page says so; memory stays bounded by
// the cap), and returns it as text: HTML through go-readability (the
// article) and html-to-markdown, other text types as they are, a declared
// or <meta> charset decoded and invalid UTF-8 replaced with U+FFFD. Binary
// content, a status other than 2xx, a host that does not resolve, a
// timeout and too many redirects are errors ([*FetchError]).
//
// # Server-side request forgery
//
// By default a fetch reaches public addresses only: loopback, private
// (RFC 1918, fc00::/7, CGNAT), link-local, unspecified, multicast and
// reserved addresses are refused ([*RefusedError]) after DNS resolution,
// on every redirect, and again at dial time in the dialer's Control
// function, so a name that resolves differently the second time (DNS
// rebinding) cannot reach them. Environment proxies are ignored. Agent
// authors allow private addresses with web: { allowPrivateAddresses: true }.
//
// # Searching
//
// [Searcher] is the backend interface; [NewSearcher] builds SearXNG's JSON
// API or the Brave Search API from agent.yaml's web.search (the Brave key
// comes from the environment, never agent.yaml).
//
// # Concurrency
//
// Fetchers, Searchers, Spills and the tools are safe for concurrent use.
package web

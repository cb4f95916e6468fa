package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
)

// This file is the guard against server-side request forgery: a fetch may
// reach the public internet only, never the host's own network, unless
// the agent allows private addresses. The check runs twice: on the
// addresses the host name resolves to (so the error names the name and its
// address), and again on the address the socket is about to connect to (a
// net.Dialer Control function), so a DNS answer that changes between the
// two (rebinding) cannot slip through: the dialer only ever connects to
// the addresses that passed.

// Resolver looks up a host's addresses; net.DefaultResolver is one. Tests
// inject another to make a public-looking name resolve to 127.0.0.1.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// RefusedError is a fetch refused because the address it would connect to
// is not public.
type RefusedError struct {
	// Host is the host name or literal of the URL.
	Host string
	// Addr is the refused address.
	Addr netip.Addr
	// Class says what kind of address it is ("loopback", "private", ...).
	Class string
}

func (e *RefusedError) Error() string {
	what := e.Addr.String()
	if e.Host != "" && e.Host != e.Addr.String() {
		what = fmt.Sprintf("%s (%s)", e.Host, e.Addr)
	}
	return fmt.Sprintf("refused: %s is a %s address, not on the public internet; an agent reaches it only with web: { allowPrivateAddresses: true } in agent.yaml", what, e.Class)
}

// addrClass returns what makes a not public, or "" for a public address.
func addrClass(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.IsPrivate():
		return "private"
	}
	for _, p := range otherNonPublic {
		if p.prefix.Contains(a) {
			return p.class
		}
	}
	// An IPv4 address inside NAT64 (64:ff9b::/96), 6to4 (2002::/16), an
	// IPv4-translated address (::ffff:0:a.b.c.d, ::ffff:0:0:0/96) or an IPv4-compatible one
	// (::a.b.c.d, ::/96) reaches that IPv4 address through a gateway or a stack
	// that unwraps it: judge the IPv4 address.
	if a.Is6() {
		b := a.As16()
		for _, e := range embeddedIPv4 {
			if e.prefix.Contains(a) {
				if c := addrClass(netip.AddrFrom4([4]byte(b[e.at : e.at+4]))); c != "" {
					return c + " (via " + e.name + ")"
				}
				break
			}
		}
	}
	return ""
}

// embeddedIPv4 are the IPv6 ranges that carry an IPv4 address, the bytes
// at [at, at+4) of the IPv6 address.
var embeddedIPv4 = []struct {
	prefix netip.Prefix
	at     int
	name   string
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12, "NAT64"},
	{netip.MustParsePrefix("2002::/16"), 2, "6to4"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), 12, "IPv4-translated"},
	{netip.MustParsePrefix("::/96"), 12, "IPv4-compatible"},
}

// otherNonPublic are ranges net/netip has no predicate for.
var otherNonPublic = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("100.64.0.0/10"), "private (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved (benchmarking)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private (NAT64)"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved (documentation)"},
}

// dialer connects to a host:port after resolving it with the resolver and
// refusing non-public addresses (unless allowPrivate).
type dialer struct {
	resolver     Resolver
	allowPrivate bool
	net          net.Dialer
	// classify is addrClass on the address; tests replace it to tell two
	// loopback servers apart by port.
	classify func(netip.AddrPort) string
}

func newDialer(r Resolver, allowPrivate bool) *dialer {
	d := &dialer{resolver: r, allowPrivate: allowPrivate, classify: func(ap netip.AddrPort) string { return addrClass(ap.Addr()) }}
	if !allowPrivate {
		d.net.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("refused: cannot check address %q", address)
			}
			if class := d.classify(ap); class != "" {
				return &RefusedError{Addr: ap.Addr().Unmap(), Class: class}
			}
			return nil
		}
	}
	return d
}

// DialContext resolves addr's host, drops refused addresses and dials the
// rest in turn.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ips, err = d.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			var de *net.DNSError
			if errors.As(err, &de) && de.IsNotFound {
				return nil, fmt.Errorf("host %s does not resolve", host)
			}
			return nil, fmt.Errorf("resolving %s: %w", host, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("host %s does not resolve", host)
		}
	}
	var refused error
	var errs []error
	for _, ip := range ips {
		ip = ip.Unmap()
		if !d.allowPrivate {
			if class := d.classify(netip.AddrPortFrom(ip, portNum(port))); class != "" {
				if refused == nil {
					refused = &RefusedError{Host: host, Addr: ip, Class: class}
				}
				continue
			}
		}
		conn, err := d.net.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 && refused != nil {
		return nil, refused
	}
	return nil, errors.Join(errs...)
}

func portNum(s string) uint16 {
	n, _ := strconv.ParseUint(s, 10, 16)
	return uint16(n)
}

package storehttp

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// LoopbackOnly returns a handler that passes a request on to h only if
// its Host names this machine's loopback interface, or one of hosts. A
// server that listens on loopback alone is still reached by the web
// pages its user visits, through DNS rebinding: a page's own host name,
// made to resolve to 127.0.0.1, sends its requests there, with that name
// as their Host, and the browser lets the page read the answers. Checking
// the Host refuses them. Wrap the Handler (and whatever else the server
// shows, expvar's /debug/vars say) in it when serving on loopback; behind
// a proxy, or on a network, name the hosts the pages are reached by.
//
// The loopback names are localhost and the loopback addresses (127.0.0.1
// and the rest of 127.0.0.0/8, [::1]), with any port or none. Each of
// hosts is a name or address, alone (any port) or with a port
// (host:port, [v6]:port). Names compare regardless of case, and addresses
// as addresses. Any other request, one with no Host included, gets 421
// Misdirected Request, with a line of plain text that says why, and h
// never sees it.
func LoopbackOnly(h http.Handler, hosts ...string) http.Handler {
	type allowed struct{ host, port string }
	var also []allowed
	for _, hp := range hosts {
		host, port := splitHost(hp)
		also = append(also, allowed{normalHost(host), port})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, port := splitHost(r.Host)
		host = normalHost(host)
		ok := host != "" && isLoopback(host)
		for _, a := range also {
			ok = ok || host != "" && host == a.host && (a.port == "" || a.port == port)
		}
		if ok {
			h.ServeHTTP(w, r)
			return
		}
		noStore(w)
		what := "no Host"
		if r.Host != "" {
			what = fmt.Sprintf("Host %.80q", r.Host)
		}
		http.Error(w, "storehttp: "+what+" is not a name this server answers to (localhost, 127.0.0.1, [::1] and the hosts it was given)", http.StatusMisdirectedRequest)
	})
}

// splitHost splits a Host header into its host, without brackets, and its
// port, "" if there is none.
func splitHost(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
}

// normalHost writes an address in its standard form and a name in lower
// case, so that both compare as strings.
func normalHost(host string) string {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	return strings.ToLower(host)
}

// isLoopback reports whether a normalized host is localhost or a loopback
// address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

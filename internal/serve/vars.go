package serve

import (
	"bytes"
	"expvar"
	"fmt"
	"net/http"
)

// varsHandler serves expvar's variables as expvar.Handler does, leaving
// out "cmdline" unless cmdline is set: the command line names the key
// file, its directory and every flag, which the page has no need to show
// to whoever can read it.
func varsHandler(cmdline bool) http.Handler {
	if cmdline {
		return expvar.Handler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.WriteString("{\n")
		first := true
		expvar.Do(func(kv expvar.KeyValue) {
			if kv.Key == "cmdline" {
				return
			}
			if !first {
				b.WriteString(",\n")
			}
			first = false
			fmt.Fprintf(&b, "%q: %s", kv.Key, kv.Value)
		})
		b.WriteString("\n}\n")
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(b.Bytes())
	})
}

package storehttp_test

import (
	"encoding/json"
	"expvar"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/twochoice/twochoice/store"
	"github.com/twochoice/twochoice/store/storehttp"
)

// One handler serves stores of different types, wherever it is mounted.
func ExampleHandler() {
	sessions, _ := store.NewMap[string, int](store.MapOptions{Seed: 1})
	users, _ := store.NewMap[uint64, []byte](store.MapOptions{Seed: 2})
	for i := range 1000 {
		sessions.Set("session-"+strconv.Itoa(i), i)
		users.Set(uint64(i), []byte("profile"))
	}

	h := storehttp.NewHandler(nil)
	if err := h.Add("sessions", sessions); err != nil {
		panic(err)
	}
	if err := h.Add("users", users); err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/twochoice/", http.StripPrefix("/debug/twochoice", h))

	// In a service: http.ListenAndServe("127.0.0.1:6060", mux).
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, p := range []string{"/debug/twochoice/", "/debug/twochoice/sessions", "/debug/twochoice/users.json", "/debug/twochoice/nosuch"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			panic(err)
		}
		fmt.Println(p, resp.Status)
		if p == "/debug/twochoice/users.json" {
			var doc struct {
				Entries   int      `json:"entries"`
				Placement string   `json:"placement"`
				Histogram []uint64 `json:"histogram"`
			}
			json.NewDecoder(resp.Body).Decode(&doc)
			fmt.Println(doc.Entries, doc.Placement, len(doc.Histogram))
		}
		resp.Body.Close()
	}
	// Output:
	// /debug/twochoice/ 200 OK
	// /debug/twochoice/sessions 200 OK
	// /debug/twochoice/users.json 200 OK
	// 1000 goleft 9
	// /debug/twochoice/nosuch 404 Not Found
}

// One call publishes a store in expvar, whose handler serves it at
// /debug/vars with the process's other variables.
func ExamplePublishExpvar() {
	s, _ := store.NewMap[string, int](store.MapOptions{Seed: 1})
	for i := range 500 {
		s.Set(strconv.Itoa(i), i)
	}
	if err := storehttp.PublishExpvar("twochoice.example", s); err != nil {
		panic(err)
	}
	var doc struct {
		Entries int `json:"entries"`
		Stats   struct {
			Sets uint64 `json:"sets"`
		} `json:"stats"`
	}
	json.Unmarshal([]byte(expvar.Get("twochoice.example").String()), &doc)
	fmt.Println(doc.Entries, doc.Stats.Sets)
	// Output:
	// 500 500
}

// A server on loopback wraps its handlers in LoopbackOnly, so that a web
// page that makes its own host name resolve to 127.0.0.1 (DNS rebinding)
// cannot read them.
func ExampleLoopbackOnly() {
	s, _ := store.NewMap[string, int](store.MapOptions{Seed: 1})
	h := storehttp.NewHandler(nil)
	h.Add("sessions", s)
	mux := http.NewServeMux()
	mux.Handle("/debug/twochoice/", http.StripPrefix("/debug/twochoice", h))

	// In a service: http.Server{Addr: "127.0.0.1:6060", Handler:
	// storehttp.LoopbackOnly(mux), ReadTimeout: ..., WriteTimeout: ...}.
	srv := httptest.NewServer(storehttp.LoopbackOnly(mux))
	defer srv.Close()
	for _, host := range []string{"", "attacker.example"} {
		req, _ := http.NewRequest("GET", srv.URL+"/debug/twochoice/sessions.json", nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	// Output:
	// 200 OK
	// 421 Misdirected Request
}

package tier_test

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/twochoice/twochoice/store/tier/internal/redistest"
)

// TestExample runs Example against a server it starts, and checks what
// it prints (Example has no Output comment: go test cannot know of a
// server).
func TestExample(t *testing.T) {
	s := redistest.Start(t)
	t.Setenv("TIER_EXAMPLE_ADDR", s.Addr)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	func() {
		defer func() { os.Stdout = stdout }()
		Example()
	}()
	w.Close()
	out, _ := io.ReadAll(r)
	want := "hello (from the near-cache: false)\nhello (from the near-cache: true)\nhits 1, misses 1\n"
	if got := string(out); got != want {
		t.Fatalf("Example printed\n%s\nwant\n%s", got, want)
	}
	t.Log(strings.TrimSpace(string(out)))
}

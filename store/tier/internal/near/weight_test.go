package near

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestByteBound: with replies of very different sizes, the entries never
// weigh more than MaxBytes, and what they weigh is what the weigher says
// of the entries held: large replies hold fewer entries, not more bytes.
func TestByteBound(t *testing.T) {
	sized := ops
	sized.Size = func(m *msg) int { return len(m.v) }
	const budget = 1 << 20
	for _, size := range []int{10, 1000, 20_000} {
		c, err := New(Options{MaxBytes: budget}, sized)
		if err != nil {
			t.Fatal(err)
		}
		cn := c.NewConn()
		now := time.Now()
		val := strings.Repeat("x", size)
		for i := range 20_000 {
			k := "key:" + strconv.Itoa(i)
			cn.Flight(k, "GET", time.Hour, now)
			cn.Update(k, "GET", msg{v: val})
			if i%1000 == 0 {
				if st := c.Stats(); st.Bytes > budget {
					t.Fatalf("values of %d bytes: %d entries weigh %d, over MaxBytes %d", size, st.Entries, st.Bytes, budget)
				}
			}
		}
		st := c.Stats()
		w := weigher(sized.Size)
		var sum uint64
		for k, r := range c.es.s.All() {
			sum += uint64(w(k, r))
		}
		if st.Bytes > budget || st.Bytes != sum {
			t.Errorf("values of %d bytes: Stats.Bytes %d, the entries weigh %d, MaxBytes %d", size, st.Bytes, sum, budget)
		}
		// Within the budget and most of it used: per entry, the value,
		// the key and about 150 bytes of slot and reply.
		per := uint64(size + 9 + 150)
		if want := min(uint64(budget)/per, 20_000); uint64(st.Entries) < want*8/10 {
			t.Errorf("values of %d bytes: %d entries held, want about %d", size, st.Entries, want)
		}
		t.Logf("values of %d bytes: %d entries weigh %d of %d bytes", size, st.Entries, st.Bytes, budget)
	}
}

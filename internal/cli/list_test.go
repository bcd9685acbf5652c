package cli

import (
	"errors"
	"slices"
	"strconv"
	"testing"
)

func TestParseList(t *testing.T) {
	got, err := ParseList("threads", " 4, 1,2", strconv.Atoi)
	if err != nil || !slices.Equal(got, []int{4, 1, 2}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, tc := range []struct{ s, want string }{
		{"1,2,1", "--threads 1,2,1: 1 is listed twice"},
		{"1, 2 ,2", "--threads 1, 2 ,2: 2 is listed twice"},
		{"1,01", "--threads 1,01: 01 is 1 again"},
	} {
		_, err := ParseList("threads", tc.s, strconv.Atoi)
		var re *RepeatError
		if !errors.Is(err, ErrRepeated) || !errors.As(err, &re) || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q wrapping ErrRepeated", tc.s, err, tc.want)
		}
	}
	if _, err := ParseList("threads", "1,x", strconv.Atoi); err == nil || errors.Is(err, ErrRepeated) || !errors.Is(err, strconv.ErrSyntax) {
		t.Errorf("1,x: error %v, want the parser's, wrapped", err)
	}
}

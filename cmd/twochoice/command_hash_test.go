package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twochoice/twochoice/hashfn"
	"github.com/twochoice/twochoice/internal/testutil"
)

// hashJSON runs the hash command with --format json and returns its rows.
func hashJSON(t *testing.T, args ...string) []hashRow {
	t.Helper()
	code, out, errOut := runCLI(append([]string{"hash", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
	}
	var rows []hashRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %v in %q", args, err, out)
	}
	return rows
}

// --uint64 keys are whole numbers: a key with trailing text, an exponent
// or a space is an error, not the hash of the number it starts with, and
// a leading zero does not switch to octal.
func TestHashUint64Strict(t *testing.T) {
	for _, key := range []string{"1e3", "12abc", "1 2", "-1", "+5", "", "0x", "18446744073709551616"} {
		if code, _, errOut := runCLI("hash", "--uint64", "--", key); code != exitUsage || !strings.Contains(errOut, "not an unsigned integer") {
			t.Errorf("hash --uint64 %q: exit %d, stderr %q", key, code, errOut)
		}
	}
	same := func(a, b string) {
		t.Helper()
		ra, rb := hashJSON(t, "--uint64", a), hashJSON(t, "--uint64", b)
		if ra[0].Hash != rb[0].Hash {
			t.Errorf("--uint64 %s hashes to %s, %s to %s", a, ra[0].Hash, b, rb[0].Hash)
		}
	}
	same("010", "10")
	same("0x10", "16")
	same("0X1f", "31")
	same("18446744073709551615", "0xffffffffffffffff")
}

// Flags may follow the keys, as in "hash KEY --format json": they are
// flags, not keys, and after "--" everything is a key.
func TestHashFlagsAfterKeys(t *testing.T) {
	code, out, errOut := runCLI("hash", "alpha", "--format", "json", "beta", "--seed", "7")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rows []hashRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("not JSON (%v): %q", err, out)
	}
	want := hashJSON(t, "--seed", "7", "alpha", "beta")
	if len(rows) != 2 || rows[0].Key != "alpha" || rows[1].Key != "beta" || rows[0].Hash != want[0].Hash || rows[1].Hash != want[1].Hash {
		t.Errorf("got %+v, want %+v", rows, want)
	}
	rows = hashJSON(t, "x", "--", "--seed", "-y")
	if len(rows) != 3 || rows[1].Key != "--seed" || rows[2].Key != "-y" {
		t.Errorf("after --: got %+v", rows)
	}
	if code, _, errOut := runCLI("hash", "alpha", "--nope"); code != exitUsage {
		t.Errorf("unknown flag after a key: exit %d, stderr %q", code, errOut)
	}
}

// withStdin runs f with os.Stdin reading data.
func withStdin(t *testing.T, data string, f func()) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, restore := testutil.Stdin(t, p)
	defer restore()
	f()
}

// Keys on stdin: CRLF endings are not part of the key, a key of up to
// 1 MiB is hashed, and a longer line is an error that names the line (not
// bufio.Scanner's "token too long"). TestKeyFileSameEverywhere
// checks the other rules of key files on stdin.
func TestHashStdin(t *testing.T) {
	long := strings.Repeat("k", 200<<10)
	withStdin(t, "a\r\nb\r\n"+long+"\n", func() {
		code, out, errOut := runCLI("hash", "--format", "json")
		var rows []hashRow
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 3 || rows[0].Key != "a" || rows[1].Key != "b" || rows[2].Key != long {
			t.Errorf("exit %d, stderr %q, %d rows", code, errOut, len(rows))
		}
	})
	withStdin(t, "a\n"+strings.Repeat("x", 1<<20+1)+"\n", func() {
		code, _, errOut := runCLI("hash")
		if code != exitFail || !strings.Contains(errOut, "stdin:2: workload: malformed line: longer than") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
}

// A key that is not valid UTF-8 comes out of --format json as key_base64,
// byte for byte: encoding/json alone wrote "\ufffd" for every bad byte,
// so "\xff" and "\xfe" looked like the same key. Valid keys, the empty
// one included, stay in "key".
func TestHashJSONKeepsKeyBytes(t *testing.T) {
	keys := []string{"\xff", "\xfe", "ok", "", "é", "a\xc3", "bad\x80utf8\xff"}
	code, out, errOut := runCLI(append([]string{"hash", "--format", "json", "--"}, keys...)...)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var raw []map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil || len(raw) != len(keys) {
		t.Fatalf("%d rows, %v: %s", len(raw), err, out)
	}
	f, err := hashfn.New(hashfn.XXHash, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		row := raw[i]
		key, hasKey := row["key"]
		b64, hasB64 := row["key_base64"]
		if utf8.ValidString(k) {
			if !hasKey || key != k || hasB64 {
				t.Errorf("valid key %q: row %v", k, row)
			}
		} else if hasKey || b64 != base64.StdEncoding.EncodeToString([]byte(k)) {
			t.Errorf("invalid key %q: row %v, want key_base64 %q and no key", k, row, base64.StdEncoding.EncodeToString([]byte(k)))
		}
		if want := fmt.Sprintf("%#016x", f.String(k)); row["hash"] != want {
			t.Errorf("key %q: hash %v, want %s", k, row["hash"], want)
		}
	}
	// The same from stdin, and back through hashRow.UnmarshalJSON.
	withStdin(t, strings.Join(keys, "\n"), func() {
		var got []string
		for _, r := range hashJSON(t) {
			got = append(got, r.Key)
		}
		if want := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == "" }); !slices.Equal(got, want) {
			t.Errorf("stdin: keys %q, want %q", got, want)
		}
	})
	if code, out, _ := runCLI("hash", "--help"); code != 0 || !strings.Contains(out, "key_base64") {
		t.Errorf("hash --help does not document key_base64: exit %d, %q", code, out)
	}
}

// A --uint64 key on stdin that is not a number is a bad line of the
// input: exit 1, naming the line, as a bad line of any key file is; not a
// usage error (exit 2), which could not say which line.
func TestHashUint64StdinBadLine(t *testing.T) {
	withStdin(t, "1\n0x10\nseven\n", func() {
		code, out, errOut := runCLI("hash", "--uint64")
		want := "twochoice hash: stdin:3: key \"seven\" is not an unsigned integer (decimal, or hexadecimal after 0x)\n"
		if code != exitFail || out != "" || errOut != want {
			t.Errorf("exit %d, stdout %q, stderr %q, want %d and %q", code, out, errOut, exitFail, want)
		}
	})
}

func TestHashFormats(t *testing.T) {
	args := []string{"hash", "--rule", "dchoice", "--d", "3", "--bins", "64"}
	keys := []string{"alpha", "beta"}
	code, out, errOut := runCLI(append(append(args, "--format", "json"), keys...)...)
	var rows []struct {
		Key        string   `json:"key"`
		Hash       string   `json:"hash"`
		Candidates []uint64 `json:"candidates"`
	}
	if code != 0 {
		t.Fatalf("json: code %d, stderr %q", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 || rows[1].Key != "beta" || len(rows[0].Candidates) != 3 || !strings.HasPrefix(rows[0].Hash, "0x") {
		t.Fatalf("json %v: %s", err, out)
	}
	code, out, errOut = runCLI(append(append(args, "--format", "csv"), keys...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || lines[0] != "key,hash,candidates" || !strings.HasPrefix(lines[1], "alpha,"+rows[0].Hash+",") {
		t.Fatalf("csv: code %d, stderr %q, out %q", code, errOut, out)
	}
	code, out, _ = runCLI(append(args, keys...)...)
	if code != 0 || !strings.Contains(out, rows[1].Hash) {
		t.Fatalf("table: %q", out)
	}
}

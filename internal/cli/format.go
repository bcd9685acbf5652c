package cli

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
)

// Format is how a command prints its result.
type Format uint8

const (
	// Table is aligned columns for people (the default).
	Table Format = iota
	// JSON is for scripts.
	JSON
	// CSV is for spreadsheets and scripts.
	CSV
)

// ErrFormat is returned for an unknown format name.
var ErrFormat = errors.New("cli: unknown format")

var formatNames = [...]string{Table: "table", JSON: "json", CSV: "csv"}

// String returns "table", "json" or "csv".
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Set implements flag.Value.
func (f *Format) Set(s string) error {
	for i, name := range formatNames {
		if s == name {
			*f = Format(i)
			return nil
		}
	}
	return fmt.Errorf("%w %q (want table, json or csv)", ErrFormat, s)
}

// WriteTable prints rows under a header as columns aligned with spaces.
func WriteTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	line := func(cells []string) {
		for _, c := range cells {
			fmt.Fprint(tw, c, "\t")
		}
		fmt.Fprintln(tw)
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
	return tw.Flush()
}

// WriteCSV prints rows under a header as CSV.
func WriteCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

// WriteJSON prints v as indented JSON and a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

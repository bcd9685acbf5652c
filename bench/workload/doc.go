// Package workload supplies the request streams that the benchmark harness
// replays against caches: synthetic generators and readers for real traces
// and key files.
//
// # Terms
//
//   - A key names one cached item: a uint64 for block traces and generators,
//     a string for key files.
//   - A request is one access to a key: a read ([Read]: look the key up, and
//     in a hit-ratio run insert it on a miss) or a write ([Write]: set it).
//   - A workload is a stream of requests ([Workload]). Generators ([Zipf],
//     [Aging], [Uniform], [Scan], weighted key files) never end; traces and
//     key files end with their last line. [Limit] cuts an endless stream.
//   - A rank is a key's place in a popularity order: rank 0 is the most
//     requested key. The generators' keys are their ranks, but for
//     [Aging], whose ranks count back from the newest key.
//   - A seed picks one of a generator's streams. The same generator, size and
//     seed give the same requests on every machine, and every generator's
//     Name includes its seed so that a reported run can be replayed.
//
// # Reading
//
// Read fills a caller's slice, in the manner of io.Reader, so a run pays
// one interface call per batch rather than per request and nothing is
// allocated per request; only the readers of string keys allocate, one
// string per line read. Read returns either n > 0 and a nil error, or 0 and
// an error: io.EOF at the end of a finite stream, or an error saying what was
// wrong with the input, after every request read before the fault.
//
// # Formats
//
//   - ARC traces ([NewARC]): lines "start count ignored request_number"; a
//     line stands for count requests, for the blocks start, start+1, …,
//     start+count-1 in that order. This is the format of the traces of
//     Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead Replacement
//     Cache", USENIX FAST 2003, which must be cited wherever they are used.
//   - LIRS traces ([NewLIRS]): one block number per line; blank lines and
//     lines holding only "*" are skipped, as the LIRS authors' files use them.
//   - Key files ([NewKeys], [ScanKeys], [ScanKeyFile], [ReadKeyFile]): one
//     key a line, the line up to its first tab (so a TSV's first column);
//     a trailing carriage return is dropped, lines with an empty key are
//     skipped, and a line holding a NUL byte is an error. Every command of
//     twochoice that reads a key file reads it with these functions, so a
//     file gives the same keys to all of them (keys.go has the rules).
//   - Weighted key files ([NewWeighted]): "key<TAB>weight" lines; requests
//     are drawn independently with probability proportional to the weight.
//
// [Open] reads any of them from a file, or from standard input for the
// path "-" ([StdinPath]), decompressing Zstandard
// (recognised by its magic number, whatever the file's name; but a file
// named .zst or .zstd must be Zstandard) in-process and as a stream, so a
// trace is never held in memory as text. [OpenTrace]
// opens a block trace of either format, telling which by its first line.
//
// # Errors
//
// Malformed input yields an error that wraps one of the package's sentinel
// errors ([ErrSyntax], [ErrRange], [ErrWeight], [ErrDuplicate], [ErrEmpty],
// [ErrCorrupt]) and, for a bad line, a [*LineError] that carries the input's
// name and line number. No input makes a reader panic; the parsers are
// fuzzed.
package workload

// Package serve runs the twochoice serve command: a store loaded from a
// key file, its debug page (package store/storehttp) on an HTTP server,
// and a synthetic workload against the store so that the page has
// something to show. The command in cmd/twochoice parses flags and
// signals; everything else is here, where tests can drive it.
//
// # Terms
//
//   - A key file has one key a line, or a TSV whose first column is the
//     key (the format of the load command); blank lines are skipped, and a
//     file compressed with Zstandard is read as it is decompressed. It is
//     read by workload.ScanKeyFile, as every command reads key files. A
//     key's value in the store is its line number.
//   - The workload is a stream of requests for the loaded keys, drawn by a
//     generator of package bench/workload (Zipf or uniform over the keys'
//     lines), each one a Get, a Set, a Delete, or (Inserts) a Set of a key
//     that was never in the file, which makes the store grow. It runs on
//     Threads goroutines at Rate requests per second in all.
package serve

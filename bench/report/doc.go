// Package report renders the results of the benchmark harness (package
// measure): the bench command's table, CSV and chart, and the README's
// results section, which [Generate] measures and writes in one go.
package report

// Package testutil holds what the module's tests share: whether the race
// detector is on and the skip that goes with it (race.go), small and
// read-only file systems and a file as standard input (fs.go), a paired
// timer of a store's fill against a Go map's (pairedfill.go), a doctor of
// snapshot metadata (snapshotmeta.go), the test that keeps the
// library's dependencies to the three modules it may use (deps_test.go),
// and the test that builds the README's Go examples (readme_test.go).
// Nothing outside _test.go files imports it.
package testutil

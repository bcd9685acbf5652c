// Package depcheck holds the test that keeps the library packages (hashfn,
// bucket, store and what they import) on the standard library and the three
// modules the brief allows: github.com/cespare/xxhash/v2, go.etcd.io/bbolt
// and github.com/hashicorp/go-msgpack/v2, with whatever those need
// themselves. Competitors and tools belong to bench and cmd only.
package depcheck

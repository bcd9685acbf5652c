package testutil

import (
	"encoding/binary"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	bolt "go.etcd.io/bbolt"
)

// RewriteMeta decodes the metadata record of the snapshot at path into an
// M (internal/snapshot's Meta, which this package does not import so that
// that package's own tests may use this one), passes
// it to change, and writes it back; a non-zero version also replaces the
// format version. It fails tb on any error.
func RewriteMeta[M any](tb testing.TB, path string, change func(m *M), version uint32) {
	tb.Helper()
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	h := &codec.MsgpackHandle{WriteExt: true}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("meta"))
		var m M
		if err := codec.NewDecoderBytes(b.Get([]byte("meta")), h).Decode(&m); err != nil {
			return err
		}
		change(&m)
		var enc []byte
		if err := codec.NewEncoderBytes(&enc, h).Encode(&m); err != nil {
			return err
		}
		if version != 0 {
			var v [4]byte
			binary.BigEndian.PutUint32(v[:], version)
			if err := b.Put([]byte("version"), v[:]); err != nil {
				return err
			}
		}
		return b.Put([]byte("meta"), enc)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

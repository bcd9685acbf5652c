package snapshot

import (
	"fmt"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// StashBucket is the bucket index recorded for an entry in the stash.
const StashBucket = -1

// handle is the msgpack configuration of every record: the current spec
// (strings as str, byte slices as bin) so that a schema-less reader can
// tell them apart.
var handle = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{WriteExt: true}
	h.RawToString = false
	return h
}()

// record is the typed form of a record: the msgpack array
// [key, value, expiry, bucket].
type record[K, V any] struct {
	//lint:ignore U1000 read by the codec, through reflection
	_struct bool `codec:",toarray"`
	Key     K
	Value   V
	Expiry  int64
	Bucket  int64
}

// Encoder encodes records, reusing its buffer between calls. It is not
// safe for concurrent use.
type Encoder[K, V any] struct {
	buf []byte
	enc *codec.Encoder
	rec record[K, V]
}

// NewEncoder returns an encoder for records of keys K and values V.
func NewEncoder[K, V any]() *Encoder[K, V] {
	e := &Encoder[K, V]{}
	e.enc = codec.NewEncoderBytes(&e.buf, handle)
	return e
}

// EncodeRecord returns the encoding of one record. The slice is reused by
// the next call.
func (e *Encoder[K, V]) EncodeRecord(key K, value V, expiry, bucket int64) ([]byte, error) {
	e.buf = e.buf[:0]
	e.enc.ResetBytes(&e.buf)
	e.rec.Key, e.rec.Value, e.rec.Expiry, e.rec.Bucket = key, value, expiry, bucket
	if err := e.enc.Encode(&e.rec); err != nil {
		return nil, fmt.Errorf("snapshot: encoding a record: %w", err)
	}
	var zk K
	var zv V
	e.rec.Key, e.rec.Value = zk, zv // do not keep the caller's key and value alive
	return e.buf, nil
}

// Decoder decodes records into Go values of types K and V.
type Decoder[K, V any] struct {
	dec *codec.Decoder
	rec record[K, V]
}

// NewDecoder returns a decoder for records of keys K and values V.
func NewDecoder[K, V any]() *Decoder[K, V] {
	return &Decoder[K, V]{dec: codec.NewDecoderBytes(nil, handle)}
}

// DecodeRecord decodes one record. A record that does not decode as K and V
// is ErrCorrupt.
func (d *Decoder[K, V]) DecodeRecord(b []byte) (key K, value V, expiry, bucket int64, err error) {
	d.dec.ResetBytes(b)
	d.rec = record[K, V]{}
	if err := d.dec.Decode(&d.rec); err != nil {
		return key, value, 0, 0, fmt.Errorf("%w: a record does not decode: %v", ErrCorrupt, err)
	}
	return d.rec.Key, d.rec.Value, d.rec.Expiry, d.rec.Bucket, nil
}

// AnyRecord is a record decoded without knowing its types: strings come
// back as string, byte slices as []byte, integers as int64 or uint64,
// arrays as []interface{} and maps as map[interface{}]interface{}.
type AnyRecord struct {
	Key, Value     interface{}
	Expiry, Bucket int64
}

// DecodeAny decodes a record schema-free, as inspect does.
func DecodeAny(b []byte) (AnyRecord, error) {
	var r record[interface{}, interface{}]
	if err := codec.NewDecoderBytes(b, handle).Decode(&r); err != nil {
		return AnyRecord{}, fmt.Errorf("%w: a record does not decode: %v", ErrCorrupt, err)
	}
	return AnyRecord{Key: r.Key, Value: r.Value, Expiry: r.Expiry, Bucket: r.Bucket}, nil
}

module github.com/twochoice/twochoice/store/tier

go 1.26.0

replace github.com/twochoice/twochoice => ../..

require (
	github.com/redis/rueidis v1.0.80
	github.com/twochoice/twochoice v0.0.0-00010101000000-000000000000
	github.com/valkey-io/valkey-go v1.0.80
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/hashicorp/go-msgpack/v2 v2.1.5 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

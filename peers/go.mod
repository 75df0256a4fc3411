module github.com/limitspec/limitspec/peers

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/throttled/throttled/v2 v2.15.0
	golang.org/x/time v0.16.0
)

require github.com/hashicorp/golang-lru v0.5.4 // indirect

module github.com/limitspec/limitspec/bench

go 1.26.0

replace github.com/limitspec/limitspec => ../

require (
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/limitspec/limitspec v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	github.com/sethvargo/go-limiter v0.7.1
	github.com/throttled/throttled/v2 v2.15.0
	github.com/ulule/limiter/v3 v3.11.2
	golang.org/x/time v0.16.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/hashicorp/golang-lru v0.5.4 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

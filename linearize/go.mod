module github.com/limitspec/limitspec/linearize

go 1.26.0

replace github.com/limitspec/limitspec => ..

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/limitspec/limitspec v0.0.0-00010101000000-000000000000
)

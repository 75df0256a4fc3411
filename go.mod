module github.com/limitspec/limitspec

go 1.24

require gopkg.in/yaml.v3 v3.0.1 // indirect

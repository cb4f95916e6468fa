// Package pluginpb is the generated code of julyfs.proto, the wire protocol
// between julyfs and its backend plugins. Use package plugins, not this.
package pluginpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative julyfs.proto

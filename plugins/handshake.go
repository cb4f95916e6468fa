package plugins

import (
	"os"
	"strconv"

	"github.com/hashicorp/go-plugin"
)

// ProtocolVersion is the version of the wire protocol (pluginpb) this
// package speaks. A host and a plugin must share one; go-plugin negotiates
// it at start and a mismatch fails naming both.
const ProtocolVersion = 1

// protocolVersionOverride lets a test build a plugin that speaks another
// version (go build -ldflags "-X ...plugins.protocolVersionOverride=99").
var protocolVersionOverride string

func protocolVersion() int {
	if v, err := strconv.Atoi(protocolVersionOverride); err == nil {
		return v
	}
	return ProtocolVersion
}

// handshake is the magic cookie: a plugin binary run by hand (without the
// cookie in its environment) says it is a plugin and exits; a binary that
// is not a julyfs plugin never prints the handshake line.
var handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "JULYFS_PLUGIN",
	MagicCookieValue: "8f3c1e0a-julyfs-backend",
}

// pluginName is the key of the one plugin in the set.
const pluginName = "fs"

// runAsPlugin reports whether this process was started by a julyfs host.
func runAsPlugin() bool {
	return os.Getenv(handshake.MagicCookieKey) == handshake.MagicCookieValue
}

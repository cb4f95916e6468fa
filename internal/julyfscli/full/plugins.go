package full

// julyfsd serves plugin: mounts (julyfs hands them over).
import _ "github.com/julyfs/julyfs/plugins/pluginkind"

package main

// agent.yaml roots may mount plugins.
import _ "github.com/julyfs/julyfs/plugins/pluginkind"

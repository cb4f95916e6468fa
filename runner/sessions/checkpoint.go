package sessions

// Copy-on-write sessions (july run --cow): each turn ends with a
// checkpoint of the session's layer, named in its turn.completed or
// turn.failed event; session.rewound marks a rewind; a fork's
// session.json names the session and turn it was forked from.

// TypeSessionRewound marks a rewind ([SessionRewound]): the layer went
// back to the checkpoint of turn ToTurn, and a replay to the model skips
// the turns after it up to this event.
const TypeSessionRewound = "session.rewound"

// SessionRewound is session.rewound's data.
type SessionRewound struct {
	// ToTurn is the turn number (the n-th turn.started of the log, from
	// 1; 0 for the base, before any turn) the session went back to.
	ToTurn int `json:"toTurn"`
}

// Checkpoint names a turn's checkpoint: the manifest of the session's
// layer at the end of the turn.
type Checkpoint struct {
	// Turn is the turn's number (the n-th turn.started of the log, from 1).
	Turn int `json:"turn"`
	// Manifest is the manifest's path relative to the session directory.
	Manifest string `json:"manifest"`
	// Entries counts the paths that differ from the base; Changed, those
	// the turn changed.
	Entries int `json:"entries"`
	Changed int `json:"changed"`
	// Error says why no checkpoint was recorded (a full disk, say); the
	// previous checkpoints stay valid.
	Error string `json:"error,omitempty"`
}

// Fork is where a forked session came from.
type Fork struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
}

package checkpoint

// SetPause sets the function called at each phase of Take and Apply.
func SetPause(f func(phase string)) { pauseAt = f }

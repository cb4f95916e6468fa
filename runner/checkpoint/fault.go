package checkpoint

// pauseAt, when set (by the package's crash tests, which kill the process
// there), is called at each named phase of Take and Apply.
var pauseAt func(phase string)

func phase(name string) {
	if pauseAt != nil {
		pauseAt(name)
	}
}

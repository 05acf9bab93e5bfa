package webtransport

import "time"

// after returns a channel that fires after ms milliseconds, for polling
// loops whose exit does not depend on the timing.
func after(ms int) <-chan time.Time { return time.After(time.Duration(ms) * time.Millisecond) }

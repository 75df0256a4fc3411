package redislimit

// Queued is how many calls wait in l's queues for a batch to take them.
func Queued(l *Limiter) int {
	if l.batch == nil {
		return 0
	}
	l.batch.mu.Lock()
	defer l.batch.mu.Unlock()
	n := 0
	for _, ln := range l.batch.lanes {
		for _, w := range ln.queue {
			if w.state == queued {
				n++
			}
		}
	}
	return n
}

// Lanes is how many lanes l holds: those with calls queued or in flight.
func Lanes(l *Limiter) int {
	if l.batch == nil {
		return 0
	}
	l.batch.mu.Lock()
	defer l.batch.mu.Unlock()
	return len(l.batch.lanes)
}

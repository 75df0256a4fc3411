package kit

// register adds v to the registry m at k, under mu; a second
// registration of k, named by what, panics (at start-up: registries are
// filled by the init functions of generated code).
func register[K comparable, V any](m map[K]V, k K, v V, what string) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := m[k]; dup {
		panic("kit: " + what + " registered twice")
	}
	m[k] = v
}

// lookup returns the registry m's value at k, under mu.
func lookup[K comparable, V any](m map[K]V, k K) (V, bool) {
	mu.RLock()
	defer mu.RUnlock()
	v, ok := m[k]
	return v, ok
}

package standin

import (
	"strconv"
	"time"
)

// time is TIME: the wall clock as seconds and microseconds, both as bulk
// strings (only the keys' clock is frozen).
func (s *Store) time([]string) (Reply, error) {
	us := time.Now().UnixMicro()
	return []any{strconv.FormatInt(us/1e6, 10), strconv.FormatInt(us%1e6, 10)}, nil
}

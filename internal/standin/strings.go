package standin

import "strings"

// The string commands.

func (s *Store) get(a []string) (Reply, error) {
	v, err := s.of(a[0], "string")
	if v == nil || err != nil {
		return nil, err
	}
	return v.str, nil
}

// set supports SET key value [PX ms]; it replaces a value of any type.
func (s *Store) set(a []string) (Reply, error) {
	v := &value{kind: "string", str: a[1], ttl: -1}
	switch opts := a[2:]; {
	case len(opts) == 0:
	case len(opts) == 2 && strings.EqualFold(opts[0], "PX"):
		ms, err := expireMs(opts[1], "SET")
		if err != nil {
			return nil, err
		}
		v.ttl = ms
	default:
		return nil, setOptionError(opts)
	}
	s.keys[a[0]] = v
	return statusOK, nil
}

// psetex is PSETEX key ms value: SET key value PX ms.
func (s *Store) psetex(a []string) (Reply, error) {
	ms, err := expireMs(a[1], "PSETEX")
	if err != nil {
		return nil, err
	}
	s.keys[a[0]] = &value{kind: "string", str: a[2], ttl: ms}
	return statusOK, nil
}

// expireMs reads the time to live of cmd (SET PX, PSETEX): an integer
// of at least 1 ms.
func expireMs(arg, cmd string) (int64, error) {
	ms, err := parseInt(arg)
	if err != nil {
		return 0, err
	}
	if ms <= 0 {
		return 0, errExpire(cmd)
	}
	return ms, nil
}

// setOptionError is the refusal of SET's options other than one PX.
func setOptionError(opts []string) error {
	for _, o := range opts {
		switch strings.ToUpper(o) {
		case "NX", "XX", "GET", "EX", "EXAT", "PXAT", "KEEPTTL":
			return errUnsupported("SET", o)
		}
	}
	return errSyntax
}

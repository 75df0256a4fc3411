package linearize

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// fingerprint writes out everything reachable from v, by reflection,
// unexported fields included (read only): two values with the same
// fingerprint hold the same data, so that a deterministic model in either
// decides every later call alike. Maps are written in the order of their
// keys' fingerprints, pointers by what they point to (a pointer met again
// on the way down, a cycle, fails). ok is false when v reaches something
// whose behaviour is not its data: a func, a channel, an unsafe pointer;
// the caller then tells states apart by another means.
func fingerprint(v any) (fp string, ok bool) {
	w := fpWriter{onPath: map[uintptr]bool{}}
	w.value(reflect.ValueOf(v))
	return w.b.String(), !w.failed
}

type fpWriter struct {
	b      strings.Builder
	onPath map[uintptr]bool
	failed bool
}

func (w *fpWriter) value(v reflect.Value) {
	if w.failed {
		return
	}
	if !v.IsValid() {
		w.b.WriteString("∅")
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		w.b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		w.b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		w.b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case reflect.String:
		w.b.WriteString(strconv.Quote(v.String()))
	case reflect.Pointer, reflect.Interface:
		w.indirect(v)
	case reflect.Struct:
		w.b.WriteByte('{')
		for i := range v.NumField() {
			w.value(v.Field(i))
			w.b.WriteByte(',')
		}
		w.b.WriteByte('}')
	case reflect.Slice, reflect.Array:
		w.b.WriteByte('[')
		for i := range v.Len() {
			w.value(v.Index(i))
			w.b.WriteByte(',')
		}
		w.b.WriteByte(']')
	case reflect.Map:
		w.mapOf(v)
	default: // func, chan, unsafe.Pointer, complex
		w.failed = w.failed || !v.IsZero()
		w.b.WriteString("?")
	}
}

// indirect writes what a pointer or an interface holds, its dynamic type
// with it.
func (w *fpWriter) indirect(v reflect.Value) {
	if v.IsNil() {
		w.b.WriteString("nil")
		return
	}
	if v.Kind() == reflect.Interface {
		v = v.Elem()
		w.b.WriteString(v.Type().String())
		w.b.WriteByte(':')
		w.value(v)
		return
	}
	p := v.Pointer()
	if w.onPath[p] {
		w.failed = true
		return
	}
	w.onPath[p] = true
	w.b.WriteByte('&')
	w.value(v.Elem())
	delete(w.onPath, p)
}

// mapOf writes a map's entries sorted by their keys' fingerprints.
func (w *fpWriter) mapOf(v reflect.Value) {
	if v.IsNil() {
		w.b.WriteString("nilmap")
		return
	}
	type entry struct{ k, v string }
	var entries []entry
	for it := v.MapRange(); it.Next(); {
		k := fpWriter{onPath: w.onPath}
		k.value(it.Key())
		e := fpWriter{onPath: w.onPath}
		e.value(it.Value())
		w.failed = w.failed || k.failed || e.failed
		entries = append(entries, entry{k.b.String(), e.b.String()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.k, b.k) })
	w.b.WriteString("map[")
	for _, e := range entries {
		w.b.WriteString(e.k)
		w.b.WriteByte(':')
		w.b.WriteString(e.v)
		w.b.WriteByte(',')
	}
	w.b.WriteByte(']')
}

package storetest

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Fill sets every exported field of the struct v points at, and of every
// struct, pointer, slice and map under it, to a non-zero value that no other
// field holds, so a round trip through a store that drops or swaps a field
// cannot compare equal. Times are whole microseconds in UTC from base on.
// A field of a kind it cannot fill (an interface, a func) panics, so a new
// type of field fails the suite instead of going unchecked.
func Fill(v any, base time.Time) {
	f := &filler{base: base}
	f.fill(reflect.ValueOf(v).Elem(), reflect.TypeOf(v).Elem().Name())
}

type filler struct {
	n    int
	base time.Time
}

var timeType = reflect.TypeFor[time.Time]()

func (f *filler) next() int { f.n++; return f.n }

func (f *filler) fill(v reflect.Value, path string) {
	if v.Type() == timeType {
		n := f.next()
		v.Set(reflect.ValueOf(f.base.Add(time.Duration(n)*time.Hour + time.Duration(n)*time.Microsecond).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d", path[strings.LastIndexByte(path, '.')+1:], f.next()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.next()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.next()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.next()) + 0.25)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), path)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		f.fill(s.Index(0), path+"[0]")
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f.fill(k, path+".key")
		f.fill(e, path+"[key]")
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if sf := v.Type().Field(i); sf.IsExported() {
				f.fill(v.Field(i), path+"."+sf.Name)
			}
		}
	default:
		panic(fmt.Sprintf("storetest.Fill: %s is a %s, which Fill cannot fill: teach it", path, v.Kind()))
	}
}

// Diff lists the paths at which got differs from want (times compared as
// instants), so a failed round trip names the fields a store lost.
func Diff(want, got any) []string {
	var out []string
	diff(reflect.ValueOf(want), reflect.ValueOf(got), reflect.TypeOf(want).String(), &out)
	return out
}

func diff(w, g reflect.Value, path string, out *[]string) {
	if w.Type() == timeType {
		if wt, gt := w.Interface().(time.Time), g.Interface().(time.Time); !wt.Equal(gt) {
			*out = append(*out, fmt.Sprintf("%s: want %v, got %v", path, wt, gt))
		}
		return
	}
	switch w.Kind() {
	case reflect.Pointer:
		if w.IsNil() || g.IsNil() {
			if w.IsNil() != g.IsNil() {
				*out = append(*out, fmt.Sprintf("%s: want nil=%v, got nil=%v", path, w.IsNil(), g.IsNil()))
			}
			return
		}
		diff(w.Elem(), g.Elem(), path, out)
	case reflect.Struct:
		for i := range w.NumField() {
			if sf := w.Type().Field(i); sf.IsExported() {
				diff(w.Field(i), g.Field(i), path+"."+sf.Name, out)
			}
		}
	case reflect.Slice:
		if w.Len() != g.Len() {
			*out = append(*out, fmt.Sprintf("%s: want %d elements, got %d", path, w.Len(), g.Len()))
			return
		}
		for i := range w.Len() {
			diff(w.Index(i), g.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	default:
		if !reflect.DeepEqual(w.Interface(), g.Interface()) {
			*out = append(*out, fmt.Sprintf("%s: want %v, got %v", path, w.Interface(), g.Interface()))
		}
	}
}

// Command wire-schema prints, as JSON, how each Go type reachable from the named Kubernetes kinds
// travels in protobuf and in JSON: per struct field its protobuf number and its JSON name and
// omission rule, read from the Go types' own struct tags by reflection. Corral's protobuf decoder
// (operator/corral/k8s/wire_schema.json) is driven by this table, so decoding a watched object
// from protobuf gives the dict the API server's JSON would have given.
//
// Regenerate with hack/gen-wire-schema; it builds this against the pinned k8s.io/api.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Field is one struct field. Kind names how a value is written: a scalar ("string", "bool",
// "int", "float", "bytes"), "message" (Type names the struct), or one of the types with their own
// JSON form ("time", "microtime", "quantity", "intorstring", "fieldsv1", "duration").
type Field struct {
	Number    int    `json:"number"`
	JSON      string `json:"json,omitempty"`
	Inline    bool   `json:"inline,omitempty"`
	OmitEmpty bool   `json:"omitempty,omitempty"`
	OmitZero  bool   `json:"omitzero,omitempty"`
	Pointer   bool   `json:"pointer,omitempty"`
	Repeated  bool   `json:"repeated,omitempty"`
	Map       bool   `json:"map,omitempty"`
	Kind      string `json:"kind"`
	Type      string `json:"type,omitempty"`
}

type Schema struct {
	Source string             `json:"source"`
	Kinds  map[string]string  `json:"kinds"` // kind -> root type
	Types  map[string][]Field `json:"types"`
}

var special = map[reflect.Type]string{
	reflect.TypeOf(metav1.Time{}):        "time",
	reflect.TypeOf(metav1.MicroTime{}):   "microtime",
	reflect.TypeOf(resource.Quantity{}):  "quantity",
	reflect.TypeOf(intstr.IntOrString{}): "intorstring",
	reflect.TypeOf(metav1.FieldsV1{}):    "fieldsv1",
	reflect.TypeOf(metav1.Duration{}):    "duration",
}

func typeName(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

type walker struct{ types map[string][]Field }

// base classifies a non-pointer, non-container type, walking structs it has not seen.
func (w *walker) base(t reflect.Type) (kind, name string) {
	if k, ok := special[t]; ok {
		return k, ""
	}
	if t == reflect.TypeOf(runtime.RawExtension{}) {
		fail("%s: RawExtension has no fixed schema", typeName(t))
	}
	switch t.Kind() {
	case reflect.String:
		return "string", ""
	case reflect.Bool:
		return "bool", ""
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64:
		return "int", ""
	case reflect.Float32, reflect.Float64:
		return "float", ""
	case reflect.Struct:
		name := typeName(t)
		w.walk(t)
		return "message", name
	}
	fail("%s: unsupported Go kind %s", t, t.Kind())
	return "", ""
}

func (w *walker) walk(t reflect.Type) {
	name := typeName(t)
	if _, seen := w.types[name]; seen {
		return
	}
	w.types[name] = nil // mark before recursing: types can be recursive
	fields := []Field{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		jsonTag := sf.Tag.Get("json")
		if jsonTag == "-" {
			continue
		}
		protoTag := sf.Tag.Get("protobuf")
		if protoTag == "" {
			if sf.Type == reflect.TypeOf(metav1.TypeMeta{}) {
				continue // apiVersion and kind travel in the protobuf envelope
			}
			fail("%s.%s: no protobuf tag", name, sf.Name)
		}
		parts := strings.Split(protoTag, ",")
		number, err := strconv.Atoi(parts[1])
		if err != nil {
			fail("%s.%s: bad protobuf tag %q", name, sf.Name, protoTag)
		}
		opts := strings.Split(jsonTag, ",")
		f := Field{Number: number, JSON: opts[0]}
		for _, o := range opts[1:] {
			switch o {
			case "omitempty":
				f.OmitEmpty = true
			case "omitzero":
				f.OmitZero = true
			case "inline":
				f.Inline = true
			default:
				fail("%s.%s: unsupported json option %q", name, sf.Name, o)
			}
		}
		if f.JSON == "" && sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			f.Inline = true // encoding/json inlines an untagged embedded struct
		}
		if f.JSON == "" && !f.Inline {
			f.JSON = sf.Name
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			f.Pointer = true
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8:
			f.Kind = "bytes"
		case ft.Kind() == reflect.Slice:
			f.Repeated = true
			elem := ft.Elem()
			if elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice || elem.Kind() == reflect.Map {
				fail("%s.%s: unsupported element type %s", name, sf.Name, elem)
			}
			f.Kind, f.Type = w.base(elem)
		case ft.Kind() == reflect.Map:
			if ft.Key().Kind() != reflect.String {
				fail("%s.%s: map key %s is not a string", name, sf.Name, ft.Key())
			}
			f.Map = true
			value := ft.Elem()
			if value.Kind() == reflect.Pointer || value.Kind() == reflect.Map ||
				(value.Kind() == reflect.Slice && value.Elem().Kind() != reflect.Uint8) {
				fail("%s.%s: unsupported map value type %s", name, sf.Name, value)
			}
			f.Kind, f.Type = w.base(value)
		default:
			f.Kind, f.Type = w.base(ft)
		}
		if f.Inline && f.Kind != "message" {
			fail("%s.%s: inline field is not a struct", name, sf.Name)
		}
		fields = append(fields, f)
	}
	w.types[name] = fields
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "wire-schema: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 {
		fail("usage: wire-schema SOURCE-LABEL")
	}
	w := &walker{types: map[string][]Field{}}
	roots := map[string]reflect.Type{"Pod": reflect.TypeOf(corev1.Pod{})}
	s := Schema{Source: os.Args[1], Kinds: map[string]string{}, Types: w.types}
	for kind, t := range roots {
		w.walk(t)
		s.Kinds[kind] = typeName(t)
	}
	out, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		fail("%v", err)
	}
	os.Stdout.Write(append(out, '\n'))
}

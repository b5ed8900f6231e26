// Command object-shapes prints, as JSON, the shape of every Kubernetes kind Corral's engine
// reads (from an API server's watch or a `corral simulate` file): per Go struct its JSON fields
// and the type of each, with integer and float widths (int32, int64, float64, ...) and the
// types that have their own JSON form (quantity, time, int-or-string). It is read by reflection
// from the pinned k8s.io/api Go types, so Corral's object checker
// (operator/corral/scheduler/backend/shapes.json) and the fuzzers' object grammar hold to
// exactly what the API server's JSON decoder accepts.
//
// Regenerate with hack/gen-object-shapes; it builds this against the pinned k8s.io/api.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Type is how one value is written in JSON. Kind is a scalar ("string", "bool", "bytes",
// "int32", "int64", "uint32", "uint64", "float32", "float64"), a type with its own JSON form
// ("quantity", "time", "microtime", "intorstring", "duration", "any"), "struct" (Name names
// it), "list" or "map" (Of is the element's type; map keys are strings).
type Type struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	Of   *Type  `json:"of,omitempty"`
}

// Struct is one Go struct: its JSON fields in declaration order (inlined structs' fields
// included where encoding/json puts them).
type Struct struct {
	Fields [][2]any `json:"fields"` // [json name, Type]
}

type Root struct {
	APIVersion string `json:"apiVersion"`
	Type       string `json:"type"`
}

type Schema struct {
	Source string            `json:"source"`
	Kinds  map[string]Root   `json:"kinds"`
	Types  map[string]Struct `json:"types"`
}

var special = map[reflect.Type]string{
	reflect.TypeOf(metav1.Time{}):         "time",
	reflect.TypeOf(metav1.MicroTime{}):    "microtime",
	reflect.TypeOf(resource.Quantity{}):   "quantity",
	reflect.TypeOf(intstr.IntOrString{}):  "intorstring",
	reflect.TypeOf(metav1.FieldsV1{}):     "any",
	reflect.TypeOf(metav1.Duration{}):     "duration",
	reflect.TypeOf(runtime.RawExtension{}): "any",
}

func typeName(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

type walker struct{ types map[string]Struct }

func (w *walker) typeOf(t reflect.Type) Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if k, ok := special[t]; ok {
		return Type{Kind: k}
	}
	switch t.Kind() {
	case reflect.String:
		return Type{Kind: "string"}
	case reflect.Bool:
		return Type{Kind: "bool"}
	case reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return Type{Kind: t.Kind().String()}
	case reflect.Int:
		return Type{Kind: "int64"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return Type{Kind: "bytes"}
		}
		of := w.typeOf(t.Elem())
		return Type{Kind: "list", Of: &of}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			fail("%s: map key %s is not a string", t, t.Key())
		}
		of := w.typeOf(t.Elem())
		return Type{Kind: "map", Of: &of}
	case reflect.Interface:
		return Type{Kind: "any"}
	case reflect.Struct:
		w.walk(t)
		return Type{Kind: "struct", Name: typeName(t)}
	}
	fail("%s: unsupported Go kind %s", t, t.Kind())
	return Type{}
}

func (w *walker) walk(t reflect.Type) {
	name := typeName(t)
	if _, seen := w.types[name]; seen {
		return
	}
	w.types[name] = Struct{} // mark before recursing: types can be recursive
	w.types[name] = Struct{Fields: w.fields(t)}
}

func (w *walker) fields(t reflect.Type) [][2]any {
	out := [][2]any{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		opts := strings.Split(tag, ",")
		inline := false
		for _, o := range opts[1:] {
			inline = inline || o == "inline"
		}
		if opts[0] == "" && sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			inline = true
		}
		if inline {
			out = append(out, w.fields(sf.Type)...)
			continue
		}
		jsonName := opts[0]
		if jsonName == "" {
			jsonName = sf.Name
		}
		out = append(out, [2]any{jsonName, w.typeOf(sf.Type)})
	}
	return out
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "object-shapes: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 {
		fail("usage: object-shapes SOURCE-LABEL")
	}
	roots := []struct {
		apiVersion, kind string
		t                reflect.Type
	}{
		{"v1", "Pod", reflect.TypeOf(corev1.Pod{})},
		{"v1", "Node", reflect.TypeOf(corev1.Node{})},
		{"v1", "Service", reflect.TypeOf(corev1.Service{})},
		{"v1", "ReplicationController", reflect.TypeOf(corev1.ReplicationController{})},
		{"v1", "Namespace", reflect.TypeOf(corev1.Namespace{})},
		{"v1", "PersistentVolumeClaim", reflect.TypeOf(corev1.PersistentVolumeClaim{})},
		{"v1", "PersistentVolume", reflect.TypeOf(corev1.PersistentVolume{})},
		{"apps/v1", "ReplicaSet", reflect.TypeOf(appsv1.ReplicaSet{})},
		{"apps/v1", "StatefulSet", reflect.TypeOf(appsv1.StatefulSet{})},
		{"storage.k8s.io/v1", "StorageClass", reflect.TypeOf(storagev1.StorageClass{})},
		{"storage.k8s.io/v1", "CSINode", reflect.TypeOf(storagev1.CSINode{})},
		{"storage.k8s.io/v1", "CSIDriver", reflect.TypeOf(storagev1.CSIDriver{})},
		{"storage.k8s.io/v1", "CSIStorageCapacity", reflect.TypeOf(storagev1.CSIStorageCapacity{})},
		{"storage.k8s.io/v1", "VolumeAttachment", reflect.TypeOf(storagev1.VolumeAttachment{})},
		{"policy/v1", "PodDisruptionBudget", reflect.TypeOf(policyv1.PodDisruptionBudget{})},
		{"scheduling.k8s.io/v1", "PriorityClass", reflect.TypeOf(schedulingv1.PriorityClass{})},
		{"resource.k8s.io/v1", "ResourceClaim", reflect.TypeOf(resourcev1.ResourceClaim{})},
		{"resource.k8s.io/v1", "ResourceSlice", reflect.TypeOf(resourcev1.ResourceSlice{})},
		{"resource.k8s.io/v1", "DeviceClass", reflect.TypeOf(resourcev1.DeviceClass{})},
		{"resource.k8s.io/v1", "DeviceTaintRule", reflect.TypeOf(resourcev1.DeviceTaintRule{})},
	}
	w := &walker{types: map[string]Struct{}}
	s := Schema{Source: os.Args[1], Kinds: map[string]Root{}, Types: w.types}
	for _, r := range roots {
		w.walk(r.t)
		s.Kinds[r.kind] = Root{APIVersion: r.apiVersion, Type: typeName(r.t)}
	}
	names := make([]string, 0, len(w.types))
	for n := range w.types {
		names = append(names, n)
	}
	sort.Strings(names) // encoding/json sorts map keys too; this only checks nothing is empty
	for _, n := range names {
		if w.types[n].Fields == nil {
			fail("%s: no fields", n)
		}
	}
	out, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		fail("%v", err)
	}
	os.Stdout.Write(append(out, '\n'))
}

// Command feature-gates prints, as JSON, the feature gates kube-scheduler knows at its own
// version: every gate's default, stage and lock, and the dependencies between gates, read from
// the very feature gate the kube-scheduler command registers (importing its app package pulls in
// every registration the binary makes). Corral's table of gates
// (operator/corral/scheduler/config/feature_gates.json) is this output.
//
// Regenerate with hack/gen-feature-gates; it builds this against the pinned k8s.io/kubernetes.
package main

import (
	"encoding/json"
	"os"
	"sort"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

type table struct {
	EmulationVersion        string `json:"emulationVersion"`
	MinCompatibilityVersion string `json:"minCompatibilityVersion"`
	Gates                   []gate `json:"gates"`
}

type gate struct {
	Name    string   `json:"name"`
	Default bool     `json:"default"`
	Stage   string   `json:"stage"`
	Locked  bool     `json:"locked"`
	Depends []string `json:"dependsOn,omitempty"`
}

func main() {
	fg := utilfeature.DefaultMutableFeatureGate
	deps := fg.(interface {
		Dependencies() map[featuregate.Feature][]featuregate.Feature
	}).Dependencies()
	available := fg.GetAll()
	var out []gate
	for name := range fg.GetAllVersioned() {
		// A gate not available at the emulated version (upstream's PreAlpha) is known but can
		// be set to neither value.
		g := gate{Name: string(name), Stage: string(featuregate.PreAlpha)}
		if spec, ok := available[name]; ok {
			g.Default, g.Locked, g.Stage = spec.Default, spec.LockToDefault, string(spec.PreRelease)
		}
		if g.Stage == "" {
			g.Stage = "GA"
		}
		for _, d := range deps[name] {
			g.Depends = append(g.Depends, string(d))
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	doc := table{
		EmulationVersion:        fg.EmulationVersion().String(),
		MinCompatibilityVersion: fg.MinCompatibilityVersion().String(),
		Gates:                   out,
	}
	if err := enc.Encode(doc); err != nil {
		os.Exit(1)
	}
}

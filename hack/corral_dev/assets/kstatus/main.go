// kstatus prints what sigs.k8s.io/cli-utils' kstatus library (the reader Flux, Argo CD's
// kstatus health and kpt use) computes for each Kubernetes object it is given.
//
// Input: a JSON array of objects on stdin. Output: a JSON array, one entry per object, in
// order: {"name": ..., "status": "Current"|"InProgress"|"Failed"|..., "message": ...}; an
// object the library cannot judge is reported with its error instead of a status.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type verdict struct {
	Name    string `json:"name"`
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kstatus: reading stdin:", err)
		os.Exit(2)
	}
	var objects []json.RawMessage
	if err := json.Unmarshal(data, &objects); err != nil {
		fmt.Fprintln(os.Stderr, "kstatus: stdin is not a JSON array of objects:", err)
		os.Exit(2)
	}
	out := make([]verdict, 0, len(objects))
	for _, raw := range objects {
		// Decoded as the API machinery does (integers as int64), not as generic JSON.
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			fmt.Fprintln(os.Stderr, "kstatus: not a Kubernetes object:", err)
			os.Exit(2)
		}
		v := verdict{Name: u.GetName()}
		result, err := status.Compute(u)
		if err != nil {
			v.Error = err.Error()
		} else {
			v.Status = result.Status.String()
			v.Message = result.Message
		}
		out = append(out, v)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "kstatus: writing stdout:", err)
		os.Exit(2)
	}
}

// ceiling-binder: the minimal scheduler of the benchmark's ceiling (see bench/ceiling.py).
//
// It watches the given namespaces (comma-separated) for unbound pods of one schedulerName and
// posts a pods/binding for each as soon as it appears, round-robin over the given nodes,
// CONCURRENCY in flight. No filtering, no scoring, no rate limit: what is left is the API
// server's cost of a binding. The protocol runs it in place of a scheduler (bench/schedulers.py),
// on the scheduler's CPU, for the same pods.
// Go and the standard library only (HTTP/2 over TLS, as client-go), so the client is not the
// bottleneck the way a Python one is on a 2-core machine.
//
// usage: ceiling-binder SERVER TOKEN CAFILE NAMESPACES SCHEDULER CONCURRENCY NODESFILE
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

type event struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	} `json:"object"`
}

func main() {
	if len(os.Args) != 8 {
		fmt.Fprintln(os.Stderr, "usage: ceiling-binder SERVER TOKEN CAFILE NAMESPACES SCHEDULER CONCURRENCY NODESFILE")
		os.Exit(2)
	}
	server, token, caFile, scheduler := os.Args[1], os.Args[2], os.Args[3], os.Args[5]
	namespaces := strings.Split(os.Args[4], ",")
	concurrency, err := strconv.Atoi(os.Args[6])
	must(err)
	nodeText, err := os.ReadFile(os.Args[7])
	must(err)
	nodes := strings.Fields(string(nodeText))
	ca, err := os.ReadFile(caFile)
	must(err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: concurrency,
	}}
	do := func(method, path string, body []byte) *http.Response {
		req, err := http.NewRequest(method, server+path, bytes.NewReader(body))
		must(err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		must(err)
		return resp
	}

	type pod struct{ namespace, name string }
	pods := make(chan pod, 1<<20)
	var count int64
	for i := 0; i < concurrency; i++ {
		go func() {
			for p := range pods {
				node := nodes[int(atomic.AddInt64(&count, 1)-1)%len(nodes)]
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":%q},`+
					`"target":{"apiVersion":"v1","kind":"Node","name":%q}}`, p.name, node)
				r := do("POST", "/api/v1/namespaces/"+p.namespace+"/pods/"+p.name+"/binding", []byte(body))
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
		}()
	}
	selector := url.QueryEscape("spec.nodeName=,spec.schedulerName=" + scheduler)
	var watches []*http.Response
	for _, namespace := range namespaces {
		podsPath := "/api/v1/namespaces/" + namespace + "/pods"
		// List the unbound pods first and bind those too: a pod created before the watch
		// started (the driver does not wait for "ready") is not an ADDED event of the watch.
		var list struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"items"`
		}
		resp := do("GET", podsPath+"?fieldSelector="+selector, nil)
		must(json.NewDecoder(resp.Body).Decode(&list))
		resp.Body.Close()
		for _, item := range list.Items {
			pods <- pod{namespace, item.Metadata.Name}
		}
		watches = append(watches, do("GET", fmt.Sprintf(
			"%s?watch=true&resourceVersion=%s&fieldSelector=%s&timeoutSeconds=3600",
			podsPath, list.Metadata.ResourceVersion, selector), nil))
	}
	fmt.Println("ready")
	done := make(chan struct{})
	for i, watch := range watches {
		namespace := namespaces[i]
		go func(body io.Reader) {
			decoder := json.NewDecoder(body)
			for {
				var ev event
				if err := decoder.Decode(&ev); err != nil {
					done <- struct{}{}
					return
				}
				if ev.Type == "ADDED" {
					pods <- pod{namespace, ev.Object.Metadata.Name}
				}
			}
		}(watch.Body)
	}
	<-done // a watch ended (its timeout, or the API server went away): so does the binder
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// csi-capacity-driver: the CSI driver Corral's tests provision with, driven by the real
// external-provisioner. It serves csi-test's driver harness (gRPC on a unix socket) with an
// Identity and a Controller service; there is no Node service (kwok nodes mount nothing).
//
// Contract:
//   - Topology: one key (--topology-key); a segment is one value of it (a zone).
//   - Capacity: --capacity-file holds JSON {"<segment value>": <total bytes>}, re-read on every
//     call, so a test grows or shrinks a segment by rewriting the file. GetCapacity answers the
//     total minus the bytes of the volumes this process created there; a segment not in the
//     file has 0.
//   - CreateVolume places the volume in the first preferred (else requisite) segment and fails
//     with ResourceExhausted when it does not fit; DeleteVolume frees it. Volumes live in memory.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/kubernetes-csi/csi-test/v5/driver"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type volume struct {
	segment string
	bytes   int64
}

type plugin struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	name, key, capacityFile string

	mu      sync.Mutex
	volumes map[string]volume
}

func (p *plugin) totals() (map[string]int64, error) {
	data, err := os.ReadFile(p.capacityFile)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "capacity file: %v", err)
	}
	out := map[string]int64{}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, status.Errorf(codes.Unavailable, "capacity file %s: %v", p.capacityFile, err)
	}
	return out, nil
}

// free is the segment's total minus what this process placed there; p.mu is held.
func (p *plugin) free(segment string) (int64, error) {
	totals, err := p.totals()
	if err != nil {
		return 0, err
	}
	free := totals[segment]
	for _, v := range p.volumes {
		if v.segment == segment {
			free -= v.bytes
		}
	}
	return max(free, 0), nil
}

func (p *plugin) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: p.name, VendorVersion: "1"}, nil
}

func (p *plugin) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	service := func(t csi.PluginCapability_Service_Type) *csi.PluginCapability {
		return &csi.PluginCapability{Type: &csi.PluginCapability_Service_{
			Service: &csi.PluginCapability_Service{Type: t}}}
	}
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{
		service(csi.PluginCapability_Service_CONTROLLER_SERVICE),
		service(csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS),
	}}, nil
}

func (p *plugin) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}

func (p *plugin) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	rpc := func(t csi.ControllerServiceCapability_RPC_Type) *csi.ControllerServiceCapability {
		return &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{
			Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}}
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{
		rpc(csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME),
		rpc(csi.ControllerServiceCapability_RPC_GET_CAPACITY),
	}}, nil
}

func (p *plugin) segmentOf(req *csi.TopologyRequirement) string {
	for _, list := range [][]*csi.Topology{req.GetPreferred(), req.GetRequisite()} {
		for _, t := range list {
			if v, ok := t.GetSegments()[p.key]; ok {
				return v
			}
		}
	}
	return ""
}

func (p *plugin) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	segment := p.segmentOf(req.GetAccessibilityRequirements())
	if segment == "" {
		return nil, status.Errorf(codes.InvalidArgument, "no %s in the accessibility requirements", p.key)
	}
	size := req.GetCapacityRange().GetRequiredBytes()
	if existing, ok := p.volumes[req.GetName()]; ok {
		segment, size = existing.segment, existing.bytes // idempotent retry
	} else {
		free, err := p.free(segment)
		if err != nil {
			return nil, err
		}
		if size > free {
			return nil, status.Errorf(codes.ResourceExhausted, "%s=%s has %d bytes free, %d requested", p.key, segment, free, size)
		}
		p.volumes[req.GetName()] = volume{segment, size}
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{
		VolumeId:           req.GetName(),
		CapacityBytes:      size,
		AccessibleTopology: []*csi.Topology{{Segments: map[string]string{p.key: segment}}},
	}}, nil
}

func (p *plugin) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.volumes, req.GetVolumeId())
	return &csi.DeleteVolumeResponse{}, nil
}

func (p *plugin) GetCapacity(_ context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	free, err := p.free(req.GetAccessibleTopology().GetSegments()[p.key])
	if err != nil {
		return nil, err
	}
	return &csi.GetCapacityResponse{AvailableCapacity: free}, nil
}

func main() {
	endpoint := flag.String("endpoint", "", "unix:///path/to/csi.sock")
	name := flag.String("name", "capacity.csi.corral.dev", "the CSI driver name")
	key := flag.String("topology-key", "topology.kubernetes.io/zone", "the one topology key")
	capacityFile := flag.String("capacity-file", "", `JSON {"<segment value>": <total bytes>}`)
	flag.Parse()
	socket, ok := strings.CutPrefix(*endpoint, "unix://")
	if !ok || socket == "" || *capacityFile == "" {
		fmt.Fprintln(os.Stderr, "usage: csi-capacity-driver --endpoint unix:///path --capacity-file FILE")
		os.Exit(2)
	}
	_ = os.Remove(socket) // a socket left by a killed run
	p := &plugin{name: *name, key: *key, capacityFile: *capacityFile, volumes: map[string]volume{}}
	d := driver.NewCSIDriver(&driver.CSIDriverServers{Identity: p, Controller: p})
	listener, err := net.Listen("unix", socket)
	if err == nil {
		err = d.Start(listener)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "csi-capacity-driver:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "csi-capacity-driver: serving", *name, "on", socket)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	d.Stop()
}

package domain_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

var at = time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)

// placement is a two-node gang of 2 ranks × 2 GPUs per node, as placement
// builds one.
func placement() domain.Placement {
	return domain.Placement{MasterAddr: "10.0.0.1", MasterPort: 29500, Leaves: []string{"leaf-1"},
		Nodes: []domain.NodePlacement{
			{Node: "n1", NodeRank: 0, GPUs: []int{0, 1, 2, 3}, Ranks: []domain.Rank{
				{Rank: 0, LocalRank: 0, GPUs: []int{0, 1}, CPUs: []int{0, 1}}, {Rank: 1, LocalRank: 1, GPUs: []int{2, 3}}}},
			{Node: "n2", NodeRank: 1, GPUs: []int{4, 5, 6, 7}, Ranks: []domain.Rank{
				{Rank: 2, LocalRank: 0, GPUs: []int{4, 5}}, {Rank: 3, LocalRank: 1, GPUs: []int{6, 7}}}},
		}}
}

// valid holds one well-formed value of every decoded type, keyed by
// decoder; validSeeds and the fuzz targets start from them.
func valid() map[string]any {
	p := placement()
	return map[string]any{
		"Proposal":      domain.Proposal{JobID: "train-1", Attempt: 1, Placement: p, ProposedAt: at, JobRevision: 42, Note: "backfill"},
		"Report":        domain.Report{JobID: "train-1", Attempt: 2, Node: "n1", Kind: domain.ReportFailed, Rank: 1, ExitCode: 137, Reason: "killed", Time: at},
		"CancelRequest": domain.CancelRequest{JobID: "train-1", Reason: "user asked"},
		"DrainRequest":  domain.DrainRequest{JobID: "train-1", Kind: domain.DrainCheckpoint, Then: domain.ThenRequeue, Reason: "lockstep checkpoint"},
		"CheckpointAck": domain.CheckpointAck{JobID: "train-1", Attempt: 1, Rank: 3, Step: 1200, Path: "ckpt/step-1200"},
		"AckReply":      domain.AckReply{OK: true, Complete: true},
		"NodeRequest":   domain.NodeRequest{Node: "n1", Reason: "maintenance"},
		"Assignment": domain.Assignment{JobID: "train-1", Attempt: 2, Epoch: 7587, Node: "n2", NodeRank: 1, NNodes: 2, WorldSize: 4,
			MasterAddr: "10.0.0.1", MasterPort: 29500, Ranks: p.Nodes[1].Ranks, Command: []string{"python", "train.py"},
			Env: map[string]string{"EPOCHS": "3"}, RestartCount: 1,
			Resume:        &domain.CheckpointRef{Step: 1200, Path: "/ckpt/1200", Rank: 0, Attempt: 1, At: at},
			CheckpointDir: "/ckpt", Workdir: "/home/ada", TraceParent: "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01",
			GPUBind: "closest", JobName: "llama", Queue: "default", Nodes: []string{"n1", "n2"}, CPUsPerTask: 4,
			Batch: &jobspec.Batch{Script: "#!/bin/sh\nsrun true\n", Output: "%j.out"}},
		"Allocation": domain.Allocation{JobID: "train-1", Attempt: 2, State: domain.AllocRunning, Placement: p, Lease: 99,
			ReservedAt: at, LaunchDeadline: at.Add(time.Minute), Started: map[string]bool{"n1": true, "n2": true},
			Exited: map[string]int{"n1": 0}, NodeEpochs: map[string]int64{"n1": 5, "n2": 6}, WholeNodes: []string{"n2"},
			Pull: &domain.PullPhase{Image: "nvcr.io/nvidia/pytorch:24.10-py3", Timeout: 10 * time.Minute, Deadline: at.Add(10 * time.Minute),
				Nodes:  map[string]domain.NodePull{"n1": {Took: 1200 * time.Millisecond, Bytes: 12 << 20, Pulled: true}, "n2": {Took: 3 * time.Millisecond, Bytes: 12 << 20}},
				DoneAt: at.Add(1300 * time.Millisecond)}},
		"Node": domain.Node{Name: "n1", Addr: "10.0.0.1", GPUs: 8, CPUs: 64, Leaf: "leaf-1", Spine: "spine-1", Epoch: 5, ContainerRuntime: domain.ContainerRuntimeDocker,
			GPUModel: "NVIDIA H100 80GB HBM3", GPUMemoryMiB: 81559, GPUDistance: pairedGPUs(8),
			Unhealthy: []domain.GPUFault{{GPU: 3, Reason: "uncorrectable ECC errors: 2", Since: time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)}},
			NUMA: []domain.NUMANode{{ID: 0, GPUs: []int{0, 1, 2, 3}, CPUs: []int{0, 1, 2, 3}, MemoryMiB: 1031000, NICs: []string{"mlx5_0"}},
				{ID: 1, GPUs: []int{4, 5, 6, 7}, CPUs: []int{4, 5, 6, 7}}}},
		"Claim": domain.Claim{JobID: "train-1", Attempt: 2},
		"DrainRecord": domain.DrainRecord{JobID: "train-1", Attempt: 2, Signal: "SIGUSR1", Expected: []int{0, 1},
			Drain: domain.Drain{Kind: domain.DrainPreempt, Then: domain.ThenRequeue, Reason: "preempted by prod-1", RequestedAt: at, Deadline: at.Add(time.Minute), Actor: "lockstep:placement"},
			Acks:  map[int]domain.CheckpointRef{1: {Step: 1200, Rank: 1, Attempt: 2, Path: "ckpt/step-1200"}}},
		"StepLaunch": domain.StepLaunch{JobID: "train-1", Attempt: 2, Step: 0, Nodes: []string{"n1", "n2"}, Tasks: []int{8, 8},
			Argv: []string{"python", "-m", "torch.distributed.run"}, Env: map[string]string{"NCCL_DEBUG": "INFO"}},
		"StepOutput": domain.StepOutput{JobID: "train-1", Attempt: 2, Step: 0, Task: 9, Kind: domain.StepStdout, Line: "loss 1.25"},
		"StepKill":   domain.StepKill{JobID: "train-1", Attempt: 2, Step: 0},
	}
}

// decoders adapt every Decode* function to one signature.
var decoders = map[string]func([]byte) (any, error){
	"Proposal":      adapt(domain.DecodeProposal),
	"Report":        adapt(domain.DecodeReport),
	"CancelRequest": adapt(domain.DecodeCancelRequest),
	"DrainRequest":  adapt(domain.DecodeDrainRequest),
	"CheckpointAck": adapt(domain.DecodeCheckpointAck),
	"AckReply":      adapt(domain.DecodeAckReply),
	"NodeRequest":   adapt(domain.DecodeNodeRequest),
	"Assignment":    adapt(domain.DecodeAssignment),
	"Allocation":    adapt(domain.DecodeAllocation),
	"Node":          adapt(domain.DecodeNode),
	"Claim":         adapt(domain.DecodeClaim),
	"DrainRecord":   adapt(domain.DecodeDrainRecord),
	"StepLaunch":    adapt(domain.DecodeStepLaunch),
	"StepOutput":    adapt(domain.DecodeStepOutput),
	"StepKill":      adapt(domain.DecodeStepKill),
}

func adapt[T any](f func([]byte) (T, error)) func([]byte) (any, error) {
	return func(b []byte) (any, error) { return f(b) }
}

func TestDecodersAcceptWhatServicesSend(t *testing.T) {
	for name, v := range valid() {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decoders[name](data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		again, _ := json.Marshal(got)
		if string(again) != string(data) {
			t.Errorf("%s changed in decoding:\n got  %s\n want %s", name, again, data)
		}
	}
	if len(decoders) != len(valid()) {
		t.Errorf("%d decoders, %d valid values", len(decoders), len(valid()))
	}
}

// patch returns the valid value of a type as a JSON object with some
// fields replaced (a nil value deletes the field).
func patch(t *testing.T, name string, fields map[string]any) []byte {
	t.Helper()
	data, _ := json.Marshal(valid()[name])
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// raw is JSON put in a patch as is.
type raw string

func (r raw) MarshalJSON() ([]byte, error) { return []byte(r), nil }

type badCase struct {
	decoder string
	data    []byte
	want    string
}

// badCases are forged and malformed messages with what the error must say;
// they are also seeds of the fuzz corpus.
func badCases(t *testing.T) []badCase {
	badPlacement := placement()
	badPlacement.Nodes[1].Ranks[0].GPUs = []int{0, 5} // GPU 0 is n1's
	dupRank := placement()
	dupRank.Nodes[1].Ranks[0].Rank = 0
	// A placement's every check, with the path each error names (the
	// checker builds the paths only when it reports).
	placed := func(change func(p *domain.Placement)) []byte {
		p := placement()
		change(&p)
		return patch(t, "Proposal", map[string]any{"placement": p})
	}
	manyErrors := placement()
	for i := range manyErrors.Nodes {
		for j := range manyErrors.Nodes[i].Ranks {
			manyErrors.Nodes[i].Ranks[j].LocalRank = 9
			manyErrors.Nodes[i].Ranks[j].GPUs = []int{-1, -2, -3, -4, -5}
		}
	}
	return []badCase{
		{"Report", []byte(`{"jobId":`), "malformed JSON"},
		{"Report", []byte(`[1]`), "must be domain.Report"},
		{"Report", patch(t, "Report", map[string]any{"attempt": raw("1.0")}), "attempt: must be int"},
		{"Report", patch(t, "Report", map[string]any{"attempt": 0}), "attempt: 0 is not between 1"},
		{"Report", patch(t, "Report", map[string]any{"kind": "exploded"}), `kind: "exploded" is not one of`},
		{"Report", patch(t, "Report", map[string]any{"node": "n1\u001b[2J"}), `node: "n1\x1b[2J" is not a node name`},
		{"Report", patch(t, "Report", map[string]any{"node": "n1/../n2"}), `node: "n1/../n2" is not a node name`},
		{"Report", patch(t, "Report", map[string]any{"node": nil}), "node: required"},
		{"Report", patch(t, "Report", map[string]any{"rank": -1}), "rank: -1"},
		{"Report", patch(t, "Report", map[string]any{"jobId": "../etc"}), "jobId"},
		{"Report", patch(t, "Report", map[string]any{"reason": strings.Repeat("x", 5000)}), "reason: 5000 bytes"},
		{"Proposal", patch(t, "Proposal", map[string]any{"placement": map[string]any{"nodes": []any{}}}), "placement.nodes: 0 nodes"},
		{"Proposal", patch(t, "Proposal", map[string]any{"placement": badPlacement}), "placement.nodes.1.ranks.0.gpus.0: GPU 0 is not among the node's"},
		{"Proposal", patch(t, "Proposal", map[string]any{"placement": dupRank}), "placement.nodes.1.ranks.0.rank: 0 appears twice"},
		{"Proposal", patch(t, "Proposal", map[string]any{"attempt": -3}), "attempt"},
		{"CancelRequest", []byte(`{}`), "jobId"},
		{"DrainRequest", patch(t, "DrainRequest", map[string]any{"then": "explode"}), "then"},
		{"DrainRequest", patch(t, "DrainRequest", map[string]any{"kind": ""}), "kind"},
		{"CheckpointAck", patch(t, "CheckpointAck", map[string]any{"step": -1}), "step: -1 is negative"},
		{"CheckpointAck", patch(t, "CheckpointAck", map[string]any{"path": "a\nb"}), "path"},
		{"AckReply", []byte(`{"ok":true,"error":"but no"}`), "error: set on a reply that says ok"},
		{"NodeRequest", []byte(`{"node":"a.b"}`), "node"},
		{"Assignment", patch(t, "Assignment", map[string]any{"command": []string{""}}), "command"},
		{"Assignment", patch(t, "Assignment", map[string]any{"workdir": "/x/../../../etc"}), `workdir: "/x/../../../etc" has a ".." element`},
		{"Assignment", patch(t, "Assignment", map[string]any{"env": map[string]string{"1X": "y"}}), "env"},
		{"Assignment", patch(t, "Assignment", map[string]any{"nodeRank": 2}), "nodeRank: 2 is not between 0 and 1"},
		{"Assignment", patch(t, "Assignment", map[string]any{"masterPort": 70000}), "masterPort"},
		{"Assignment", patch(t, "Assignment", map[string]any{"nodes": []string{"n2", "n1"}}), `nodes: node rank 1 is "n1", not this assignment's node "n2"`},
		{"Assignment", patch(t, "Assignment", map[string]any{"nodes": []string{"n1"}}), "nodes: 1 is not between 2 and 2"},
		{"Assignment", patch(t, "Assignment", map[string]any{"nodes": []string{"n2", "n2"}}), `nodes.1: "n2" is named twice`},
		{"Assignment", patch(t, "Assignment", map[string]any{"batch": map[string]any{"script": ""}}), "batch.script: required"},
		{"Allocation", patch(t, "Allocation", map[string]any{"state": "held"}), "state"},
		{"Allocation", patch(t, "Allocation", map[string]any{"started": map[string]bool{"n9": true}}), `started: "n9" is not a node of the placement`},
		{"Allocation", patch(t, "Allocation", map[string]any{"wholeNodes": []string{"n9"}}), `wholeNodes: "n9" is not a node of the placement`},
		{"Allocation", patch(t, "Allocation", map[string]any{"wholeNodes": []string{"n1", "n1"}}), `wholeNodes: "n1" is listed twice`},
		{"Node", patch(t, "Node", map[string]any{"numa": []any{map[string]any{"id": 0, "gpus": []int{8}}}}), "numa.0.gpus.0: GPU 8 is not between 0 and 7"},
		{"Node", patch(t, "Node", map[string]any{"gpus": -1}), "gpus"},
		{"Node", patch(t, "Node", map[string]any{"gpuMemoryMiB": -5}), "gpuMemoryMiB: -5 is not between"},
		{"Node", patch(t, "Node", map[string]any{"gpuDistance": [][]int{{0}}}), "gpuDistance: 1 rows for 8 GPUs"},
		{"Node", patch(t, "Node", map[string]any{"gpuDistance": asymmetric()}), "gpuDistance.0.1: 1, but 6 the other way"},
		{"Node", patch(t, "Node", map[string]any{"unhealthy": []any{map[string]any{"gpu": 8, "reason": "x"}}}), "unhealthy.0.gpu: GPU 8 is not between 0 and 7"},
		{"Node", patch(t, "Node", map[string]any{"unhealthy": []any{map[string]any{"gpu": 1}}}), "unhealthy.0.reason: required"},
		{"Node", patch(t, "Node", map[string]any{"numa": []any{map[string]any{"id": 0, "nics": []string{"mlx5 0"}}}}), "numa.0.nics.0"},
		{"Claim", []byte(`{"jobId":"a","attempt":0}`), "attempt"},
		{"Claim", []byte(strings.Repeat(" ", domain.MaxMessageBytes+1)), "bytes, more than"},
		{"Assignment", patch(t, "Assignment", map[string]any{"gpuBind": "socket"}), `gpuBind: "socket" is not one of`},
		{"StepLaunch", patch(t, "StepLaunch", map[string]any{"tasks": []int{8}}), "tasks: 1 is not between 2 and 2"},
		{"StepLaunch", patch(t, "StepLaunch", map[string]any{"tasks": []int{8, 0}}), "tasks: 0 is not between 1"},
		{"StepLaunch", patch(t, "StepLaunch", map[string]any{"nodes": []string{"n1", "../n2"}}), "nodes"},
		{"StepLaunch", patch(t, "StepLaunch", map[string]any{"argv": []string{}}), "argv"},
		{"StepOutput", patch(t, "StepOutput", map[string]any{"kind": "shell"}), `kind: "shell" is not one of`},
		{"StepOutput", patch(t, "StepOutput", map[string]any{"code": 300}), "code: 300 is not between 0 and 255"},
		{"StepKill", patch(t, "StepKill", map[string]any{"step": -1}), "step: -1 is not between"},
		{"StepKill", patch(t, "StepKill", map[string]any{"signal": "SIGKILL"}), `signal: "SIGKILL" is not one of`},
		{"Assignment", patch(t, "Assignment", map[string]any{"batch": nil, "container": map[string]any{"image": "Probe:latest"}}), `container.image: "Probe:latest" is not an image reference`},
		{"Assignment", patch(t, "Assignment", map[string]any{"batch": nil, "container": map[string]any{"image": "probe", "mounts": []any{map[string]any{"source": "data", "target": "/data"}}}}), `container.mounts.0.source: "data" is relative`},
		{"Assignment", patch(t, "Assignment", map[string]any{"batch": nil, "container": map[string]any{"image": "probe", "pullPolicy": "Sometimes"}}), `container.pullPolicy: "Sometimes" is not one of`},
		{"Report", patch(t, "Report", map[string]any{"kind": "pulled", "rank": nil, "exitCode": nil, "reason": nil, "pullMs": -1}), "pullMs: -1 is not between 0"},
		{"Report", patch(t, "Report", map[string]any{"kind": "pulled", "rank": nil, "exitCode": nil, "reason": nil, "imageBytes": int64(1) << 41}), "imageBytes: 2199023255552 is not between 0"},
		{"Report", patch(t, "Report", map[string]any{"imageBytes": 5}), `pullMs: set on a "failed" report`},
		{"Report", patch(t, "Report", map[string]any{"kind": "pull-failed", "rank": nil, "exitCode": nil, "reason": nil}), "reason: required"},
		{"Allocation", patch(t, "Allocation", map[string]any{"pull": map[string]any{"image": "p", "timeout": int64(time.Minute), "nodes": map[string]any{"n9": map[string]any{"took": 1}}}}), `pull.nodes: "n9" is not a node of the placement`},
		{"Allocation", patch(t, "Allocation", map[string]any{"pull": map[string]any{"image": "p", "timeout": 0}}), "pull.timeout: 0s is not between"},
		{"Allocation", patch(t, "Allocation", map[string]any{"pull": map[string]any{"image": "Bad Image", "timeout": int64(time.Minute)}}), "pull.image"},
		{"Allocation", patch(t, "Allocation", map[string]any{"pull": map[string]any{"image": "p", "timeout": int64(time.Minute), "nodes": map[string]any{"n1": map[string]any{"bytes": -1}}}}), "pull.nodes.n1.bytes: -1"},
		{"Assignment", patch(t, "Assignment", map[string]any{"pullOnly": true}), "pullOnly: set on an assignment without a container"},
		{"Node", patch(t, "Node", map[string]any{"containerRuntime": "rkt"}), `containerRuntime: "rkt" is not a runtime`},
		{"DrainRecord", patch(t, "DrainRecord", map[string]any{"attempt": 0}), "attempt: 0 is not between"},
		{"DrainRecord", patch(t, "DrainRecord", map[string]any{"acks": map[string]any{"5": map[string]any{"attempt": 2}}}), "acks.5: rank 5 is not one the drain expects"},
		{"DrainRecord", patch(t, "DrainRecord", map[string]any{"drain": map[string]any{"kind": "evict", "then": "requeue"}}), `drain.kind: "evict" is not one of`},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[0].GPUs = []int{0, 1, 2, 1024} }), "placement.nodes.0.gpus.3: 1024 is not between 0 and 1023"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[0].GPUs = []int{0, 1, 2, 2} }), "placement.nodes.0.gpus.3: 2 appears twice"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[1].GPUs = nil }), "placement.nodes.1.ranks.0.gpus.0: GPU 4 is not among the node's"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[1].GPUs = []int{4, 5, 6, 7, 8} }), "placement.nodes.1.ranks: the node claims 5 GPUs, its ranks hold 4"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[0].Ranks[1].GPUs = []int{1, 2, 3} }), "placement.nodes.0.ranks.1.gpus.0: GPU 1 is held by two ranks"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[0].Ranks[1].GPUs = []int{2, 1030} }), "placement.nodes.0.ranks.1.gpus.1: 1030 is not between 0 and 1023"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[0].Ranks[1].LocalRank = 0 }), "placement.nodes.0.ranks.1.localRank: 0, want 1"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[1].Ranks[1].Rank = 4 }), "placement.nodes.1.ranks.1.rank: 4 is not between 0 and 3"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[0].Ranks[0].CPUs = []int{0, 70000} }), "placement.nodes.0.ranks.0.cpus.1: 70000 is not between 0 and 65535"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[0].Ranks = nil }), "placement.nodes.0.ranks: 0 ranks, want 1 to 1024"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[1].NodeRank = 0 }), "placement.nodes.1.nodeRank: 0, want 1 (node ranks follow the node order)"},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[1].Node = "n1" }), `placement.nodes.1.node: "n1" appears twice`},
		{"Proposal", placed(func(p *domain.Placement) { p.Nodes[1].Node = "a.b" }), `placement.nodes.1.node: "a.b" is not a node name`},
		{"Proposal", patch(t, "Proposal", map[string]any{"placement": manyErrors}), "more errors follow"},
		{"Assignment", patch(t, "Assignment", map[string]any{"ranks": []domain.Rank{{Rank: 2, LocalRank: 0, GPUs: []int{4}}, {Rank: 3, LocalRank: 0, GPUs: []int{4}}}}),
			"ranks.1.localRank: 0, want 1; ranks.1.gpus.0: GPU 4 is held by two ranks"},
	}
}

// Every forged or malformed message is refused with the field named, as a
// permanent error (never retried).
func TestDecodersNameTheField(t *testing.T) {
	for _, tc := range badCases(t) {
		_, err := decoders[tc.decoder](tc.data)
		if err == nil {
			t.Errorf("%s accepted %.200s", tc.decoder, tc.data)
			continue
		}
		var me *domain.MessageError
		if !errors.As(err, &me) || !errs.IsPermanent(err) {
			t.Errorf("%s: %v is not a permanent *MessageError", tc.decoder, err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %q does not say %q", tc.decoder, err, tc.want)
		}
	}
}

// pairedGPUs is a PCIe server's GPU distances with NVLink bridges between
// GPUs 2k and 2k+1 and the rest across the host.
func pairedGPUs(n int) [][]int {
	d := make([][]int, n)
	for a := range d {
		d[a] = make([]int, n)
		for b := range d[a] {
			switch {
			case a == b:
				d[a][b] = domain.LinkSame
			case a/2 == b/2:
				d[a][b] = domain.LinkNVLink
			default:
				d[a][b] = domain.LinkSys
			}
		}
	}
	return d
}

func asymmetric() [][]int {
	d := pairedGPUs(8)
	d[1][0] = domain.LinkSys
	return d
}

// A pulled report with its numbers decodes as sent.
func TestDecodePulledReport(t *testing.T) {
	r := domain.Report{JobID: "train-1", Attempt: 1, Node: "n1", Kind: domain.ReportPulled, PullMillis: 1200, ImageBytes: 12 << 20, Pulled: true, Time: at}
	data, _ := json.Marshal(r)
	got, err := domain.DecodeReport(data)
	if err != nil || got != r {
		t.Fatalf("DecodeReport = %+v, %v; want %+v", got, err, r)
	}
}

// TestAssignmentContainer: a container section the spec allowed decodes
// as sent.
func TestAssignmentContainer(t *testing.T) {
	data := patch(t, "Assignment", map[string]any{"batch": nil, "container": map[string]any{
		"image": "registry.example.com:5000/team/pytorch:24.10-py3", "pullPolicy": "Never",
		"mounts": []any{map[string]any{"source": "/datasets", "target": "/data", "readOnly": true}}, "shmSize": 1 << 30}})
	a, err := domain.DecodeAssignment(data)
	if err != nil {
		t.Fatal(err)
	}
	if c := a.Container; c == nil || c.Image != "registry.example.com:5000/team/pytorch:24.10-py3" || c.PullPolicy != "Never" ||
		len(c.Mounts) != 1 || !c.Mounts[0].ReadOnly || c.ShmSize != 1<<30 {
		t.Fatalf("container decoded as %+v", a.Container)
	}
}

// A record with several bad entries in its maps names them in key order,
// whatever order the maps are walked in (a well-formed one is checked
// unsorted), and the values are checked as well as the keys.
func TestMapErrorsListInKeyOrder(t *testing.T) {
	data := patch(t, "Allocation", map[string]any{
		"started":    map[string]bool{"z9": true, "a9": true, "m9": true, "n1": true},
		"exited":     map[string]int{"n1": 300, "n2": -2},
		"nodeEpochs": map[string]int{"n2": -1, "q9": 1},
	})
	want := ""
	for range 20 { // Go walks a map in a different order each time
		_, err := domain.DecodeAllocation(data)
		if err == nil {
			t.Fatal("decoded")
		}
		if want == "" {
			want = err.Error()
			for _, part := range []string{`started: "a9"`, `started: "m9"`, `started: "z9"`, "exited.n1: 300", "exited.n2: -2", `nodeEpochs: "q9"`, "nodeEpochs.n2: -1"} {
				if !strings.Contains(want, part) {
					t.Errorf("%q does not name %s", want, part)
				}
			}
			if a, m, z := strings.Index(want, `"a9"`), strings.Index(want, `"m9"`), strings.Index(want, `"z9"`); a > m || m > z {
				t.Errorf("%q does not list the started nodes in order", want)
			}
		}
		if err.Error() != want {
			t.Fatalf("the errors changed order:\n%s\n%s", want, err)
		}
	}
}

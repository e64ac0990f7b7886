package gang

import (
	"reflect"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

func TestRefusalDecidesWhatFollows(t *testing.T) {
	kv := func(key string, v any) *mvccpb.KeyValue {
		s, ok := v.(string)
		if !ok {
			s = store.MustJSON(v)
		}
		return &mvccpb.KeyValue{Key: []byte(key), Value: []byte(s)}
	}
	p := domain.Placement{Nodes: []domain.NodePlacement{{Node: "n1"}, {Node: "n2"}}}
	claim := kv(store.ClaimKey("n1", 3), domain.Claim{JobID: "other", Attempt: 1})
	ranksN2 := kv(store.RunningKey("n2", "job"), store.Running{JobID: "job", Node: "n2", Attempt: 1})
	for _, tc := range []struct {
		name      string
		kvs       []*mvccpb.KeyValue
		conflicts []string
		ranks     []string
		step      step
	}{
		{"a GPU taken: propose again", []*mvccpb.KeyValue{claim}, []string{"n1/gpu3 held by other"}, nil, proposeAgain},
		{"a node held whole: propose again", []*mvccpb.KeyValue{kv(store.WholeNodeClaimKey("n2"), domain.Claim{JobID: "other", Attempt: 2})},
			[]string{"n2 (every GPU) held by other"}, nil, proposeAgain},
		{"a claim key nobody writes", []*mvccpb.KeyValue{kv(store.ClaimsPrefix+"n2/x", domain.Claim{JobID: "other", Attempt: 2})},
			[]string{"an unreadable claim key held by other"}, nil, proposeAgain},
		{"nothing read: a node changed", nil, []string{"a node of n1,n2 re-registered or went down"}, nil, proposeAgain},
		{"ranks of attempt 1 alive: wait for them", []*mvccpb.KeyValue{ranksN2},
			[]string{"n2 still runs ranks of attempt 1"}, []string{store.RunningKey("n2", "job")}, waitForRanks},
		{"ranks alive and a GPU taken: wait, whatever the placement", []*mvccpb.KeyValue{claim, ranksN2},
			[]string{"n1/gpu3 held by other", "n2 still runs ranks of attempt 1"}, []string{store.RunningKey("n2", "job")}, waitForRanks},
		{"an unreadable running key still counts", []*mvccpb.KeyValue{kv(store.RunningKey("n1", "job"), "garbage")},
			[]string{"ranks still run (" + store.RunningKey("n1", "job") + ": undecodable: invalid character 'g' looking for beginning of value)"},
			[]string{store.RunningKey("n1", "job")}, waitForRanks},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := readRefusal(tc.kvs, p, "job")
			if !reflect.DeepEqual(r.conflicts, tc.conflicts) || !reflect.DeepEqual(r.ranks, tc.ranks) {
				t.Errorf("read conflicts %q ranks %q, want %q %q", r.conflicts, r.ranks, tc.conflicts, tc.ranks)
			}
			if got := next(r); got != tc.step {
				t.Errorf("next = %d, want %d", got, tc.step)
			}
		})
	}
}

// A claim's job ID goes into the conflict reason, then the job record and
// the conflict event: one that fails DecodeClaim (any length, any bytes) is
// named as unreadable rather than copied there, and is not the job's own.
func TestRefusalNamesNoUnreadableClaimHolder(t *testing.T) {
	kv := func(key string, c domain.Claim) *mvccpb.KeyValue {
		return &mvccpb.KeyValue{Key: []byte(key), Value: []byte(store.MustJSON(c))}
	}
	huge := strings.Repeat("x", 1<<20)
	p := domain.Placement{Nodes: []domain.NodePlacement{{Node: "n1"}}}
	for _, tc := range []struct {
		name     string
		kvs      []*mvccpb.KeyValue
		conflict string
		own      bool
	}{
		{"a job ID of a megabyte", []*mvccpb.KeyValue{kv(store.ClaimKey("n1", 3), domain.Claim{JobID: huge, Attempt: 1})},
			"n1/gpu3 held by an unreadable claim", false},
		{"a job ID that is no job ID", []*mvccpb.KeyValue{kv(store.PortKey("10.0.0.1", 29500), domain.Claim{JobID: "a\nb c", Attempt: 1})},
			"port 10.0.0.1:29500 held by an unreadable claim", false},
		{"the job's own ID on no attempt", []*mvccpb.KeyValue{kv(store.ClaimKey("n1", 0), domain.Claim{JobID: "job"})},
			"n1/gpu0 held by an unreadable claim", false},
		{"the job's own claim", []*mvccpb.KeyValue{kv(store.PortKey("10.0.0.1", 29500), domain.Claim{JobID: "job", Attempt: 1})},
			"port 10.0.0.1:29500 held by job", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := readRefusal(tc.kvs, p, "job")
			if len(r.conflicts) != 1 || r.conflicts[0] != tc.conflict || r.own != tc.own {
				t.Errorf("conflicts %.200q own %v, want [%q] own %v", r.conflicts, r.own, tc.conflict, tc.own)
			}
		})
	}
}
